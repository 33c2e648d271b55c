import { QueryTypes, type Transaction } from 'sequelize';
import { models } from '../models';
import type { DepositChannel, DepositStatus } from '../domain/wallets';

/**
 * Deposits (`deposits`): every way money comes in, one row per provider transaction (and output, for a batched
 * crypto transaction). The triple (channel, provider reference, output) is unique, so a replayed callback, a statement line seen on two polls or a txid
 * reported twice finds the deposit it already made instead of making another.
 */

export interface DepositRow {
  id: string;
  user_id: string | null;
  channel: DepositChannel;
  rail: string;
  currency: string;
  amount_minor: string;
  status: DepositStatus;
  provider_reference: string | null;
  rail_reference: string | null;
  provider_output: string;
  quoted_reference: string | null;
  payer_phone: string | null;
  payer_name: string | null;
  payer_address: string | null;
  failure_code: string | null;
  failure_reason: string | null;
  assigned_by: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface NewDeposit {
  userId: string | null;
  channel: DepositChannel;
  rail: string;
  currency: string;
  amountMinor: string;
  status: DepositStatus;
  providerReference: string | null;
  quotedReference: string | null;
  payerPhone: string | null;
  payerName: string | null;
  payerAddress: string | null;
  /** Which output of the provider's transaction (a crypto deposit's address and memo); empty elsewhere. */
  providerOutput?: string;
}

const DEPOSIT_COLUMNS = `id, user_id, channel, rail, currency, amount_minor::text AS amount_minor, status, provider_reference,
  provider_output, rail_reference, quoted_reference, payer_phone, payer_name, payer_address, failure_code, failure_reason, assigned_by, created_at, updated_at`;

/**
 * Record a deposit inside `tx`, once per provider transaction output: `created` is false when that (channel,
 * provider reference, output) was recorded before, and the row is the one recorded then.
 */
export async function recordDeposit(deposit: NewDeposit, tx: Transaction): Promise<{ row: DepositRow; created: boolean }> {
  const providerOutput = deposit.providerOutput ?? '';
  const [inserted] = await models().query<DepositRow>(
    `INSERT INTO deposits (user_id, channel, rail, currency, amount_minor, status, provider_reference, provider_output,
                           quoted_reference, payer_phone, payer_name, payer_address)
     VALUES (:userId, :channel, :rail, :currency, :amountMinor, :status, :providerReference, :providerOutput,
             :quotedReference, :payerPhone, :payerName, :payerAddress)
     ON CONFLICT (channel, provider_reference, provider_output) DO NOTHING
     RETURNING ${DEPOSIT_COLUMNS}`,
    { replacements: { ...deposit, providerOutput }, type: QueryTypes.SELECT, transaction: tx },
  );
  if (inserted) return { row: inserted, created: true };
  const [existing] = await models().query<DepositRow>(
    `SELECT ${DEPOSIT_COLUMNS} FROM deposits
      WHERE channel = :channel AND provider_reference = :providerReference AND provider_output = :providerOutput`,
    {
      replacements: { channel: deposit.channel, providerReference: deposit.providerReference, providerOutput },
      type: QueryTypes.SELECT,
      transaction: tx,
    },
  );
  return { row: existing, created: false };
}

export async function findDeposit(depositId: string, tx?: Transaction): Promise<DepositRow | undefined> {
  const [row] = await models().query<DepositRow>(`SELECT ${DEPOSIT_COLUMNS} FROM deposits WHERE id = :depositId`, {
    replacements: { depositId },
    type: QueryTypes.SELECT,
    transaction: tx,
  });
  return row;
}

/** The deposit made for a provider transaction (of that output, when named; else any), if any. */
export async function depositByProviderReference(
  channel: DepositChannel,
  providerReference: string,
  providerOutput?: string,
): Promise<DepositRow | undefined> {
  const [row] = await models().query<DepositRow>(
    `SELECT ${DEPOSIT_COLUMNS} FROM deposits
      WHERE channel = :channel AND provider_reference = :providerReference
        AND (CAST(:providerOutput AS text) IS NULL OR provider_output = :providerOutput)
      ORDER BY id LIMIT 1`,
    { replacements: { channel, providerReference, providerOutput: providerOutput ?? null }, type: QueryTypes.SELECT },
  );
  return row;
}

/**
 * Give an unmatched deposit its owner, once: the update happens only while the deposit is still
 * `unmatched`, so of two staff assigning it at the same time one wins and the other gets undefined.
 */
export async function assignUnmatched(
  depositId: string,
  assignment: { userId: string; assignedBy: string },
  tx: Transaction,
): Promise<DepositRow | undefined> {
  const [row] = await models().query<DepositRow>(
    `UPDATE deposits SET user_id = :userId, assigned_by = :assignedBy, status = 'completed', updated_at = now()
      WHERE id = :depositId AND status = 'unmatched'
     RETURNING ${DEPOSIT_COLUMNS}`,
    { replacements: { depositId, ...assignment }, type: QueryTypes.SELECT, transaction: tx },
  );
  return row;
}

/** Unmatched deposits, newest first, keyset-paged on id. */
export async function listUnmatched(before: string | null, take: number): Promise<DepositRow[]> {
  return models().query<DepositRow>(
    `SELECT ${DEPOSIT_COLUMNS} FROM deposits
      WHERE status = 'unmatched' AND (CAST(:before AS uuid) IS NULL OR id < CAST(:before AS uuid))
      ORDER BY id DESC LIMIT :take`,
    { replacements: { before, take }, type: QueryTypes.SELECT },
  );
}

/** What a user's deposits started and not yet confirmed add up to, per currency. */
export async function pendingInForUser(userId: string): Promise<{ currency: string; pending: string }[]> {
  return models().query<{ currency: string; pending: string }>(
    `SELECT currency, sum(amount_minor)::text AS pending FROM deposits WHERE user_id = :userId AND status = 'pending' GROUP BY currency`,
    { replacements: { userId }, type: QueryTypes.SELECT },
  );
}

// --- deposits Paygate asks for (STK Push): pending until the rail answers

/** Open a pending deposit that Paygate will collect (its workflow asks the payer's phone). */
export async function openPendingDeposit(d: {
  userId: string;
  channel: DepositChannel;
  rail: string;
  currency: string;
  amountMinor: string;
  payerPhone: string;
}): Promise<DepositRow> {
  const [row] = await models().query<DepositRow>(
    `INSERT INTO deposits (user_id, channel, rail, currency, amount_minor, status, payer_phone)
     VALUES (:userId, :channel, :rail, :currency, :amountMinor, 'pending', :payerPhone)
     RETURNING ${DEPOSIT_COLUMNS}`,
    { replacements: { ...d }, type: QueryTypes.SELECT },
  );
  return row;
}

/** Record the rail's id of the collection request, once (a retried request keeps the first). */
export async function recordDepositRailReference(depositId: string, railReference: string, tx?: Transaction): Promise<void> {
  await models().query(
    `UPDATE deposits SET rail_reference = :railReference, updated_at = now() WHERE id = :depositId AND rail_reference IS NULL`,
    { replacements: { depositId, railReference }, transaction: tx },
  );
}

/**
 * Settle a pending deposit inside `tx`: `completed` with the provider's id, or `failed` with a code. Only a
 * pending deposit moves; returns it, or undefined when it had already settled (a replay).
 */
export async function settlePendingDeposit(
  depositId: string,
  outcome: { status: 'completed'; providerReference: string } | { status: 'failed'; failureCode: string; reason: string },
  tx: Transaction,
): Promise<DepositRow | undefined> {
  const [row] = await models().query<DepositRow>(
    `UPDATE deposits SET status = :status, provider_reference = coalesce(:providerReference, provider_reference),
            failure_code = :failureCode, failure_reason = :reason, updated_at = now()
      WHERE id = :depositId AND status = 'pending'
     RETURNING ${DEPOSIT_COLUMNS}`,
    {
      replacements: {
        depositId,
        status: outcome.status,
        providerReference: outcome.status === 'completed' ? outcome.providerReference : null,
        failureCode: outcome.status === 'failed' ? outcome.failureCode : null,
        reason: outcome.status === 'failed' ? outcome.reason : null,
      },
      type: QueryTypes.SELECT,
      transaction: tx,
    },
  );
  return row;
}

/**
 * A deposit just recorded as credited goes to suspense instead (its wallet would pass the KYC tier's cap):
 * `held`, with why.
 */
export async function holdRecordedDeposit(
  depositId: string,
  reason: { failureCode: string; failureReason: string },
  tx: Transaction,
): Promise<DepositRow> {
  const [row] = await models().query<DepositRow>(
    `UPDATE deposits SET status = 'held', failure_code = :failureCode, failure_reason = :failureReason, updated_at = now()
      WHERE id = :depositId AND status = 'completed'
      RETURNING ${DEPOSIT_COLUMNS}`,
    { replacements: { depositId, ...reason }, type: QueryTypes.SELECT, transaction: tx },
  );
  if (!row) throw new Error(`deposit ${depositId} was not a credited deposit`);
  return row;
}

/**
 * A credited deposit held for compliance instead (transaction monitoring, docs/monitoring.md#holds): `held`
 * with no failure code, as a screening hit holds one, so a cleared review releases it the same way.
 */
export async function holdDepositForCompliance(depositId: string, tx: Transaction): Promise<DepositRow> {
  const [row] = await models().query<DepositRow>(
    `UPDATE deposits SET status = 'held', updated_at = now() WHERE id = :depositId AND status = 'completed' RETURNING ${DEPOSIT_COLUMNS}`,
    { replacements: { depositId }, type: QueryTypes.SELECT, transaction: tx },
  );
  if (!row) throw new Error(`deposit ${depositId} was not a credited deposit`);
  return row;
}

/**
 * A deposit held for compliance (`held` by a screening hit: owned, without a limit's failure code) whose
 * review staff cleared: `completed`, once. Undefined when it is not such a deposit any more.
 */
export async function completeClearedDeposit(depositId: string, tx: Transaction): Promise<DepositRow | undefined> {
  const [row] = await models().query<DepositRow>(
    `UPDATE deposits SET status = 'completed', updated_at = now()
      WHERE id = :depositId AND status = 'held' AND failure_code IS NULL AND user_id IS NOT NULL
      RETURNING ${DEPOSIT_COLUMNS}`,
    { replacements: { depositId }, type: QueryTypes.SELECT, transaction: tx },
  );
  return row;
}

/** A deposit cleared by compliance that stays held all the same (its wallet would pass its cap): with why. */
export async function keepClearedDepositHeld(
  depositId: string,
  reason: { failureCode: string; failureReason: string },
  tx: Transaction,
): Promise<DepositRow | undefined> {
  const [row] = await models().query<DepositRow>(
    `UPDATE deposits SET failure_code = :failureCode, failure_reason = :failureReason, updated_at = now()
      WHERE id = :depositId AND status = 'held' AND failure_code IS NULL
      RETURNING ${DEPOSIT_COLUMNS}`,
    { replacements: { depositId, ...reason }, type: QueryTypes.SELECT, transaction: tx },
  );
  return row;
}
