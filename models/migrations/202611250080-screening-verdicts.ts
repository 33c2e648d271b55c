import type { Migration } from '../migrator';

/**
 * Screening verdicts: a hit is either `block` (a name at or above SCREENING_NAME_THRESHOLD, or an exact
 * identifier) or `review` (a score in the review band, initials, or a dropped name), with why it is for
 * review. Hits recorded before are blocks.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    ALTER TABLE screening_hits
      ADD COLUMN verdict text NOT NULL DEFAULT 'block' CHECK (verdict IN ('block', 'review')),
      ADD COLUMN review_reason text CHECK (review_reason IN ('near_threshold', 'initials', 'dropped_name')),
      ADD CONSTRAINT screening_hits_review_reason CHECK ((verdict = 'review') = (review_reason IS NOT NULL));
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query(`
    ALTER TABLE screening_hits DROP CONSTRAINT screening_hits_review_reason, DROP COLUMN review_reason, DROP COLUMN verdict;
  `);
};
