import type { Migration } from '../migrator';

/**
 * Screening verdicts and reviews. A hit is either `block` (a name at or above SCREENING_NAME_THRESHOLD, or
 * an exact identifier) or `review` (a score in the review band, initials, or a dropped name), with why it
 * is for review. A review hit waits for staff (`needs_review`) and is `confirmed`, `cleared` or, when a
 * payment held for it waited past its SLA, `expired`; who decided, when and why are kept with it.
 * `screening_decisions` remembers each decided pair (listed entry, screened value): a confirmed pair
 * blocks the next time, a cleared one passes. Hits recorded before are blocks.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    ALTER TABLE screening_hits
      ADD COLUMN verdict text NOT NULL DEFAULT 'block' CHECK (verdict IN ('block', 'review')),
      ADD COLUMN review_reason text CHECK (review_reason IN ('near_threshold', 'initials', 'dropped_name')),
      ADD COLUMN status text CHECK (status IN ('needs_review', 'confirmed', 'cleared', 'expired')),
      ADD COLUMN decided_by uuid REFERENCES users (id),
      ADD COLUMN decided_at timestamptz,
      ADD COLUMN decision_note text,
      ADD CONSTRAINT screening_hits_review CHECK (
        (verdict = 'review') = (review_reason IS NOT NULL) AND (verdict = 'review') = (status IS NOT NULL)
        AND (status IN ('confirmed', 'cleared')) = (decided_by IS NOT NULL)
        AND (status IS NULL OR status = 'needs_review') = (decided_at IS NULL));
    CREATE INDEX screening_hits_reviews ON screening_hits (status, id) WHERE status IS NOT NULL;

    CREATE TABLE screening_decisions (
      entry_id uuid NOT NULL REFERENCES blocklist_entries (id),
      screened_value text NOT NULL,
      decision text NOT NULL CHECK (decision IN ('confirmed', 'cleared')),
      hit_id uuid NOT NULL REFERENCES screening_hits (id),
      decided_by uuid NOT NULL REFERENCES users (id),
      decided_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (entry_id, screened_value)
    );
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query(`
    DROP TABLE screening_decisions;
    DROP INDEX screening_hits_reviews;
    ALTER TABLE screening_hits DROP CONSTRAINT screening_hits_review,
      DROP COLUMN decision_note, DROP COLUMN decided_at, DROP COLUMN decided_by, DROP COLUMN status,
      DROP COLUMN review_reason, DROP COLUMN verdict;
  `);
};
