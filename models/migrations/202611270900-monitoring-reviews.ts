import type { Migration } from '../migrator';

/**
 * Movements held by transaction monitoring (docs/monitoring.md#holds) are reviewed in the same queue, by the
 * same staff flow and within the same SLA as screening reviews: a review row in `screening_hits` with
 * `review_reason = 'monitoring'` and the evaluation that raised it instead of a listed entry and a score. An
 * order may now carry two reviews (screening cleared, then monitoring), one of each kind; a movement's
 * evaluation raises at most one.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    ALTER TABLE screening_hits
      ADD COLUMN evaluation_id uuid REFERENCES monitoring_evaluations (id),
      ALTER COLUMN entry_id DROP NOT NULL,
      ALTER COLUMN score DROP NOT NULL,
      DROP CONSTRAINT IF EXISTS screening_hits_review_reason_check,
      ADD CONSTRAINT screening_hits_review_reason_check
        CHECK (review_reason IN ('near_threshold', 'initials', 'dropped_name', 'monitoring')),
      ADD CONSTRAINT screening_hits_monitoring CHECK (
        CASE WHEN evaluation_id IS NULL THEN entry_id IS NOT NULL AND score IS NOT NULL
             ELSE entry_id IS NULL AND score IS NULL AND verdict = 'review' AND review_reason = 'monitoring' END);
    DROP INDEX screening_hits_order;
    CREATE UNIQUE INDEX screening_hits_order ON screening_hits (order_id) WHERE order_id IS NOT NULL AND evaluation_id IS NULL;
    CREATE UNIQUE INDEX screening_hits_order_monitoring ON screening_hits (order_id) WHERE order_id IS NOT NULL AND evaluation_id IS NOT NULL;
    CREATE UNIQUE INDEX screening_hits_evaluation ON screening_hits (evaluation_id) WHERE evaluation_id IS NOT NULL;
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query(`
    DELETE FROM screening_decisions WHERE hit_id IN (SELECT id FROM screening_hits WHERE evaluation_id IS NOT NULL);
    DELETE FROM screening_hits WHERE evaluation_id IS NOT NULL;
    DROP INDEX screening_hits_evaluation;
    DROP INDEX screening_hits_order_monitoring;
    DROP INDEX screening_hits_order;
    CREATE UNIQUE INDEX screening_hits_order ON screening_hits (order_id) WHERE order_id IS NOT NULL;
    ALTER TABLE screening_hits
      DROP CONSTRAINT screening_hits_monitoring,
      DROP CONSTRAINT screening_hits_review_reason_check,
      ADD CONSTRAINT screening_hits_review_reason_check CHECK (review_reason IN ('near_threshold', 'initials', 'dropped_name')),
      ALTER COLUMN score SET NOT NULL,
      ALTER COLUMN entry_id SET NOT NULL,
      DROP COLUMN evaluation_id;
  `);
};
