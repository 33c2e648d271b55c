import { QueryTypes } from 'sequelize';
import { SandboxTransfer, models } from '../models';
import type { SandboxTransfer as SandboxTransferRecord } from '../domain/sandbox';
import { uuidv7 } from '../platform/ids';

/** What the simulated provider behind the sandbox rails remembers: every read and write of `sandbox_transfers`. */
export type TransferRow = SandboxTransferRecord;

export interface NewTransfer {
  idempotencyKey: string;
  method: string;
  reference: string;
  request: unknown;
  outcome: 'succeeded' | 'failed';
  failureCode: string | null;
  providerCode: string | null;
  sendsCallback: boolean;
  settlesAfterMs: number;
}

/**
 * Record a submission: a new transfer, or, for an idempotency key already seen, the same transfer with its
 * submissions counted. Returns the transfer as stored.
 */
export async function submitTransfer(t: NewTransfer): Promise<TransferRow> {
  const [row] = await models().query<TransferRow>(
    `INSERT INTO sandbox_transfers (id, idempotency_key, method, reference, request, outcome, failure_code,
                                    provider_code, sends_callback, settles_at)
     VALUES (:id, :key, :method, :reference, :request, :outcome, :failureCode, :providerCode, :sendsCallback,
             now() + make_interval(secs => :delaySeconds))
     ON CONFLICT (idempotency_key) DO UPDATE SET submissions = sandbox_transfers.submissions + 1
     RETURNING idempotency_key, reference, outcome, failure_code, provider_code, sends_callback, settles_at, submissions,
               callback_sent_at`,
    {
      replacements: {
        id: uuidv7(),
        key: t.idempotencyKey,
        method: t.method,
        reference: t.reference,
        request: JSON.stringify(t.request),
        outcome: t.outcome,
        failureCode: t.failureCode,
        providerCode: t.providerCode,
        sendsCallback: t.sendsCallback,
        delaySeconds: t.settlesAfterMs / 1000,
      },
      type: QueryTypes.SELECT,
    },
  );
  if (!row) throw new Error('sandbox transfer insert returned no row');
  return row;
}

/** The transfer with this reference. */
export async function findTransfer(
  reference: string,
): Promise<Pick<TransferRow, 'reference' | 'outcome' | 'failure_code' | 'provider_code' | 'settles_at'> | undefined> {
  const transfer = await SandboxTransfer.findOne({ where: { reference } });
  if (!transfer) return undefined;
  return {
    reference: transfer.reference,
    outcome: transfer.outcome,
    failure_code: transfer.failureCode,
    provider_code: transfer.providerCode,
    settles_at: transfer.settlesAt,
  };
}

/** The transfer's callback was delivered. */
export async function markCallbackSent(reference: string): Promise<void> {
  await SandboxTransfer.update({ callbackSentAt: models().fn('now') }, { where: { reference } });
}

export interface SandboxOutflow {
  method: string;
  currency: string;
  /** Decimal, in the currency's unit, as the submissions carried it. */
  amount: string;
}

/** What the simulated provider paid out: settled, successful payouts per method and currency. */
export async function settledSandboxPayouts(): Promise<SandboxOutflow[]> {
  return models().query<SandboxOutflow>(
    `SELECT method, request->>'currency' AS currency, sum((request->>'amount')::numeric)::text AS amount
       FROM sandbox_transfers
      WHERE outcome = 'succeeded' AND settles_at <= now() AND coalesce(request->>'direction', 'payout') = 'payout'
      GROUP BY method, request->>'currency'`,
    { type: QueryTypes.SELECT },
  );
}
