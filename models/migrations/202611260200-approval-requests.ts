import type { Migration } from '../migrator';

/**
 * Four eyes (README, "Four-eyes requests"; docs/access.md#four-eyes): a money-moving staff action above
 * `FOUR_EYES_ABOVE_KES` is first an approval request, and money moves only when a second, different staff
 * member approves it. Each request names what it would do (`kind`, the `subject_id` it acts on, the amount,
 * and the `payload` the action needs), who asked, and who decided. The database keeps the rules that must
 * hold under any race: the decider is never the requester, a request is decided once, and one subject has at
 * most one pending request of a kind.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    CREATE TABLE approval_requests (
      id uuid PRIMARY KEY,
      kind text NOT NULL CHECK (kind ~ '^[a-z][a-z0-9_]{0,62}$'),
      subject_id text NOT NULL CHECK (char_length(subject_id) BETWEEN 1 AND 200),
      currency text NOT NULL,
      amount_minor numeric(38, 0) NOT NULL CHECK (amount_minor > 0),
      kes_equivalent_minor numeric(38, 0) NOT NULL CHECK (kes_equivalent_minor >= 0),
      payload jsonb NOT NULL DEFAULT '{}'::jsonb,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected')),
      requested_by uuid NOT NULL REFERENCES users (id),
      requested_at timestamptz NOT NULL DEFAULT now(),
      decided_by uuid REFERENCES users (id),
      decided_at timestamptz,
      decision_note text CHECK (char_length(decision_note) <= 1000),
      result jsonb,
      CONSTRAINT approval_requests_four_eyes CHECK (decided_by IS NULL OR decided_by <> requested_by),
      CONSTRAINT approval_requests_decided CHECK (
        (status = 'pending') = (decided_by IS NULL) AND (decided_by IS NULL) = (decided_at IS NULL)
      )
    );
    CREATE UNIQUE INDEX approval_requests_one_pending ON approval_requests (kind, subject_id) WHERE status = 'pending';
    CREATE INDEX approval_requests_by_status ON approval_requests (status, id);
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query('DROP TABLE IF EXISTS approval_requests');
};
