import { QueryTypes } from 'sequelize';
import { SandboxTransfer, models } from '../models';
import type { SandboxTransfer as SandboxTransferRecord } from '../domain/sandbox';
import { uuidv7 } from '../platform/ids';
import { queryPrepared } from './transaction';

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
  // Every sandbox payment records one: straight through pg (see queryRows), prepared.
  const [row] = await queryPrepared<TransferRow>(
    `INSERT INTO sandbox_transfers (id, idempotency_key, method, reference, request, outcome, failure_code,
                                    provider_code, sends_callback, settles_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now() + make_interval(secs => $10::bigint / 1000.0))
     ON CONFLICT (idempotency_key) DO UPDATE SET submissions = sandbox_transfers.submissions + 1
     RETURNING idempotency_key, reference, outcome, failure_code, provider_code, sends_callback, settles_at, submissions,
               callback_sent_at`,
    [
      uuidv7(),
      t.idempotencyKey,
      t.method,
      t.reference,
      JSON.stringify(t.request),
      t.outcome,
      t.failureCode,
      t.providerCode,
      t.sendsCallback,
      Math.round(t.settlesAfterMs),
    ],
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
  await queryPrepared('UPDATE sandbox_transfers SET callback_sent_at = now() WHERE reference = $1', [reference]);
}

/**
 * Money a sandbox simulator made arrive (a C2B payment, a bank credit, a crypto deposit), in the simulated
 * provider's own books: the sandbox's statement is read from here, never from Paygate's `deposits`.
 */
export async function recordSandboxArrival(a: {
  method: string;
  channel: string;
  reference: string;
  currency: string;
  /** Decimal, in the currency's unit. */
  amount: string;
}): Promise<void> {
  await models().query(
    `INSERT INTO sandbox_transfers (id, idempotency_key, method, reference, request, outcome, sends_callback, settles_at)
     VALUES (:id, :key, :method, :reference, :request, 'succeeded', false, now())
     ON CONFLICT DO NOTHING`,
    {
      replacements: {
        id: uuidv7(),
        key: `arrival:${a.channel}:${a.reference}`,
        method: a.method,
        reference: a.reference,
        request: JSON.stringify({ direction: 'arrival', channel: a.channel, amount: a.amount, currency: a.currency }),
      },
    },
  );
}

export interface SandboxLineRow {
  reference: string;
  direction: 'in' | 'out';
  currency: string;
  /** Decimal, in the currency's unit. */
  amount: string;
  at: Date;
}

/**
 * The simulated provider's statement for one method over a window: every transfer it executed (settled,
 * successful), payouts out and collections and arrivals in.
 */
export async function sandboxLines(method: string, from: Date, to: Date): Promise<SandboxLineRow[]> {
  return models().query<SandboxLineRow>(
    `SELECT reference, CASE coalesce(request->>'direction', 'payout') WHEN 'payout' THEN 'out' ELSE 'in' END AS direction,
            request->>'currency' AS currency, request->>'amount' AS amount, settles_at AS at
       FROM sandbox_transfers
      WHERE method = :method AND outcome = 'succeeded' AND settles_at <= now() AND settles_at >= :from AND settles_at < :to
      ORDER BY settles_at, id`,
    { replacements: { method, from: from.toISOString(), to: to.toISOString() }, type: QueryTypes.SELECT },
  );
}

/** What the simulated provider holds for us, per method and currency: what it took in less what it paid out. */
export async function sandboxHoldings(): Promise<{ method: string; currency: string; amount: string }[]> {
  return models().query<{ method: string; currency: string; amount: string }>(
    `SELECT method, request->>'currency' AS currency,
            sum(CASE coalesce(request->>'direction', 'payout') WHEN 'payout' THEN -(request->>'amount')::numeric
                ELSE (request->>'amount')::numeric END)::text AS amount
       FROM sandbox_transfers
      WHERE outcome = 'succeeded' AND settles_at <= now()
      GROUP BY method, request->>'currency'`,
    { type: QueryTypes.SELECT },
  );
}
