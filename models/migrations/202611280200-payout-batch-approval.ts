import type { Migration } from '../migrator';

/**
 * Four eyes on large bulk payouts (docs/payments.md#bulk-payouts, docs/access.md#four-eyes). A batch whose total
 * and fees come, as a KES equivalent, to `FOUR_EYES_ABOVE_KES` or more is accepted and held as any other, but
 * waits as `awaiting_approval` with its workflow not started, until a second staff member approves its
 * four-eyes request (`approve_payout_batch`): it is then `running`, and that change is the event
 * `payout_batch.approved`. Rejected, or cancelled by its owner while it waits, it is `cancelled` and its whole
 * hold goes back to the wallet (`payout_batch.cancelled`, as before).
 */
const OUTBOX = (approved: boolean) => `
    CREATE OR REPLACE FUNCTION paygate_payout_batch_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'INSERT' OR (OLD.status IS DISTINCT FROM NEW.status AND NEW.status IN ('completed', 'cancelled'))${
        approved ? `\n         OR (OLD.status = 'awaiting_approval' AND NEW.status = 'running')` : ''
      } THEN
        INSERT INTO webhook_events (type, user_id, payload)
        VALUES (CASE WHEN TG_OP = 'INSERT' THEN 'payout_batch.created'${
          approved ? ` WHEN NEW.status = 'running' THEN 'payout_batch.approved'` : ''
        } ELSE 'payout_batch.' || NEW.status END,
                NEW.user_id,
                jsonb_build_object(
                  'batch_id', NEW.id, 'status', NEW.status, 'item_count', NEW.item_count, 'currency', NEW.currency,
                  'total_amount_minor', NEW.total_amount_minor::text, 'total_fee_minor', NEW.total_fee_minor::text,
                  'at', NEW.updated_at));
      END IF;
      RETURN NULL;
    END $$;`;

export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    ALTER TABLE payout_batches DROP CONSTRAINT payout_batches_status_check;
    ALTER TABLE payout_batches ADD CONSTRAINT payout_batches_status_check
      CHECK (status IN ('awaiting_approval', 'running', 'completed', 'cancelled'));
    ${OUTBOX(true)}
  `);
};

export const down: Migration = async ({ context: sql }) => {
  // A batch still waiting for approval has no place in the older schema: undo it first (reject or cancel it).
  await sql.query(`
    ${OUTBOX(false)}
    ALTER TABLE payout_batches DROP CONSTRAINT payout_batches_status_check;
    ALTER TABLE payout_batches ADD CONSTRAINT payout_batches_status_check
      CHECK (status IN ('running', 'completed', 'cancelled'));
  `);
};
