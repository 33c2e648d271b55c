import type { Migration } from '../migrator';

/**
 * Four eyes on large refunds and screening decisions that belong to one customer (docs/appeals.md#four-eyes-on-large-refunds,
 * docs/compliance.md#screening-reviews).
 *
 * `appeals`: a refund at or above `FOUR_EYES_ABOVE_KES` is first approved by one staff member (who, when,
 * why, and the refund they approved: its amount and KES equivalent) and paid only when a second, different
 * staff member approves it; `decided_by` is then the second approver.
 *
 * `screening_decisions`: a decided pair (listed entry, screened value) is remembered for the customer whose
 * screening it was, never for everyone. Rows kept from before are given the customer of the review they were
 * decided on (its user, the held order's owner or the held deposit's owner). A pair decided on a review with
 * no customer (a screening before the account existed) is dropped: its value is reviewed again the next time
 * it is screened, which is the safe way round for a clearance and costs a confirmation one more review.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    ALTER TABLE appeals
      ADD COLUMN first_approved_by uuid REFERENCES users (id),
      ADD COLUMN first_approved_at timestamptz,
      ADD COLUMN first_approval_note text,
      ADD COLUMN first_approval jsonb,
      ADD CONSTRAINT appeals_first_approval CHECK (
        (first_approved_by IS NULL) = (first_approved_at IS NULL)
        AND (first_approved_by IS NULL) = (first_approval IS NULL)
        AND (first_approved_by IS NULL OR decided_by IS NULL OR decided_by <> first_approved_by));

    ALTER TABLE screening_decisions ADD COLUMN customer_id uuid REFERENCES users (id);
    UPDATE screening_decisions d
       SET customer_id = COALESCE(h.user_id, o.user_id, dep.user_id)
      FROM screening_hits h
      LEFT JOIN orders o ON o.id = h.order_id
      LEFT JOIN deposits dep ON dep.id = h.deposit_id
     WHERE h.id = d.hit_id;
    DELETE FROM screening_decisions WHERE customer_id IS NULL;
    ALTER TABLE screening_decisions
      ALTER COLUMN customer_id SET NOT NULL,
      DROP CONSTRAINT screening_decisions_pkey,
      ADD PRIMARY KEY (entry_id, screened_value, customer_id);
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query(`
    DELETE FROM screening_decisions d USING screening_decisions newer
     WHERE newer.entry_id = d.entry_id AND newer.screened_value = d.screened_value AND newer.decided_at > d.decided_at;
    ALTER TABLE screening_decisions DROP CONSTRAINT screening_decisions_pkey, DROP COLUMN customer_id,
      ADD PRIMARY KEY (entry_id, screened_value);
    ALTER TABLE appeals DROP CONSTRAINT appeals_first_approval,
      DROP COLUMN first_approval, DROP COLUMN first_approval_note, DROP COLUMN first_approved_at, DROP COLUMN first_approved_by;
  `);
};
