import { config } from '../platform/config';
import { componentLogger } from '../platform/logger';
import { evaluateBalanceCap, type LimitBreach } from '../domain/limits';
import { formatAmount, toKesMinor, type Currency } from '../domain/money';
import {
  SUSPENSE_COMPLIANCE,
  SUSPENSE_LIMITS,
  SUSPENSE_UNMATCHED,
  walletAccount,
  depositLines,
  normaliseDepositReference,
  type DepositChannel,
  type DepositPosting,
  type DepositStatus,
} from '../domain/wallets';
import { recordMonitoringReview, recordScreeningHit, screenRemembering } from '../repositories/compliance';
import {
  completeClearedDeposit,
  depositByProviderReference,
  findDeposit,
  holdDepositForCompliance,
  holdRecordedDeposit,
  keepClearedDepositHeld,
  pendingInForUser,
  recordDeposit,
  type DepositRow,
} from '../repositories/deposits';
import { balanceOf, postLines, walletBalances } from '../repositories/ledger';
import { inSavepoint, inTransaction, type Tx } from '../repositories/transaction';
import { kycStatusOf, userByDepositReference } from '../repositories/users';
import { monitorMovement } from './monitoring-holds';
import { screener } from './screening';

/**
 * Money in (docs/wallets.md#money-in): the one crediting path every way in goes through — a paybill confirmation, a bank
 * statement line, a crypto deposit, a confirmed STK Push, or a sandbox simulator — in whichever process
 * learns of it (the api for callbacks, the jobs process for statement and deposit polls, the worker for
 * STK Push deposits).
 */

const log = componentLogger('money-in');

/** Money a rail says has arrived, as its connector (or the sandbox simulator) reports it. */
export interface IncomingMoney {
  channel: DepositChannel;
  /** The connector: `sandbox`, `daraja`, `jenga`, `ccxt`. */
  rail: string;
  /** The provider's transaction id: the deposit is credited once per (channel, this, output). */
  providerReference: string;
  /** Which output of that transaction (a crypto deposit's address and memo); none for the other channels. */
  providerOutput?: string;
  currency: Currency;
  amountMinor: bigint;
  /** Who it is for: a user id (crypto sub-addresses) or the deposit reference the payer quoted. */
  userId?: string;
  quotedReference?: string;
  payer: { phone?: string | null; name?: string | null; address?: string | null };
}

class OverCap extends Error {
  constructor(readonly breach: LimitBreach) {
    super(breach.reason);
  }
}

/**
 * Run `credit` (postings into `userId`'s wallet) under a savepoint, then read the KYC tier's cap (docs/wallets.md#caps-by-kyc-tier)
 * from the balance the database just moved, so two credits racing into one wallet cannot both slip under
 * it. Past the cap the credit is undone and the breach returned; null when it stands (or when `credit`
 * moved nothing, returning false).
 */
export async function creditUnderCap(
  tx: Tx,
  userId: string | null,
  currency: Currency,
  credit: (sp: Tx) => Promise<boolean>,
): Promise<LimitBreach | null> {
  const { limits } = config();
  const kyc = (userId ? await kycStatusOf(userId, tx) : null) ?? 'unverified';
  try {
    await inSavepoint(tx, async (sp) => {
      if (!(await credit(sp)) || userId === null) return;
      const after = BigInt(await balanceOf(walletAccount(userId, currency), currency, sp));
      const breach = evaluateBalanceCap(kyc, toKesMinor(after, currency, limits.fxToKes), limits);
      if (breach) throw new OverCap(breach);
    });
    return null;
  } catch (err) {
    if (!(err instanceof OverCap)) throw err;
    return err.breach;
  }
}

/**
 * Credit a recorded deposit to its owner's wallet, unless transaction monitoring holds it (docs/monitoring.md#holds):
 * then the money waits in `suspense:compliance`, the deposit `held` for a review as a screening hit holds
 * it; or unless the credit would take the wallet past the KYC tier's cap: then the money waits in
 * `suspense:limits` and the deposit is `held`, with why.
 */
export async function creditWithinCap(tx: Tx, d: DepositRow, posting: DepositPosting): Promise<DepositRow> {
  const monitored = await heldByMonitoring(tx, d, posting);
  if (monitored) return monitored;
  const breach = await creditUnderCap(tx, posting.userId, posting.currency, async (sp) => {
    await postLines(sp, { depositId: d.id, kind: 'deposit', currency: d.currency, lines: depositLines('deposit', posting) });
    return true;
  });
  if (!breach) return d;
  await postLines(tx, {
    depositId: d.id,
    kind: 'deposit_held',
    currency: d.currency,
    lines: depositLines('deposit_held', posting, SUSPENSE_LIMITS),
  });
  log.warn({ depositId: d.id, userId: d.user_id, failureCode: breach.code }, 'deposit held: the wallet would pass its cap');
  return holdRecordedDeposit(d.id, { failureCode: breach.code, failureReason: breach.reason }, tx);
}

/**
 * Evaluate the deposit before its credit, in the credit's transaction: `review` and `refuse` alike keep the
 * money in `suspense:compliance` with a review for staff (a refused deposit is never credited and never
 * dropped: staff confirm it, and it stays in suspense). Undefined when it may be credited.
 */
async function heldByMonitoring(tx: Tx, d: DepositRow, posting: DepositPosting): Promise<DepositRow | undefined> {
  if (posting.userId === null) return undefined;
  const verdict = await monitorMovement(
    {
      kind: 'deposit',
      id: d.id,
      customerId: posting.userId,
      amountMinor: toKesMinor(BigInt(d.amount_minor), posting.currency, config().limits.fxToKes),
      at: new Date(d.created_at),
      counterparty: d.payer_phone ?? d.payer_address ?? d.payer_name,
    },
    tx,
  );
  if (verdict.decision === 'pass') return undefined;
  await postLines(tx, {
    depositId: d.id,
    kind: 'deposit_held',
    currency: d.currency,
    lines: depositLines('deposit_held', posting, SUSPENSE_COMPLIANCE),
  });
  const held = await holdDepositForCompliance(d.id, tx);
  await recordMonitoringReview(
    { context: 'deposit', evaluationId: verdict.evaluationId, summary: verdict.summary, userId: posting.userId, depositId: d.id },
    tx,
  );
  log.warn({ depositId: d.id, userId: posting.userId }, 'deposit held for a compliance review');
  return held;
}

/**
 * Release a deposit held for a screening review that staff cleared: `suspense:compliance → wallet`, once,
 * in the decision's transaction. Within the wallet's KYC tier cap only: past it, the money stays where it
 * is and the deposit stays `held`, now with the cap as its reason. Undefined when the deposit is not
 * held for compliance (already released, held for a limit, or with no owner: staff assign those).
 */
export async function releaseClearedDeposit(depositId: string, tx: Tx): Promise<DepositRow | undefined> {
  const held = await findDeposit(depositId, tx);
  if (!held || held.user_id === null) return undefined;
  const currency = held.currency as Currency;
  let released: DepositRow | undefined;
  const breach = await creditUnderCap(tx, held.user_id, currency, async (sp) => {
    released = await completeClearedDeposit(depositId, sp);
    if (!released) return false;
    const posting = { channel: released.channel, userId: held.user_id, currency, amountMinor: released.amount_minor };
    await postLines(sp, {
      depositId,
      kind: 'deposit_released',
      currency,
      lines: depositLines('deposit_released', posting, SUSPENSE_COMPLIANCE),
    });
    return true;
  });
  if (breach) {
    log.warn({ depositId, failureCode: breach.code }, 'deposit cleared by compliance stays held: the wallet would pass its cap');
    return keepClearedDepositHeld(depositId, { failureCode: breach.code, failureReason: breach.reason }, tx);
  }
  if (released) log.info({ depositId, userId: held.user_id }, 'deposit released: its screening review was cleared');
  return released;
}

/**
 * Credit money that has arrived, exactly once per provider transaction: a repeat of the same (channel,
 * provider reference) returns the deposit it made the first time and moves nothing. The payer is screened
 * first; on a blocklist hit the money waits in `suspense:compliance` (status `held`, with the hit recorded
 * for staff) instead of reaching the wallet. A reference nobody has leaves it in `suspense:unmatched`
 * (status `unmatched`) for staff to assign.
 */
export async function recordMoneyIn(incoming: IncomingMoney): Promise<{ row: DepositRow; created: boolean }> {
  const owner =
    incoming.userId ??
    (incoming.quotedReference ? (await userByDepositReference(normaliseDepositReference(incoming.quotedReference)))?.id : undefined);
  const [hit] = await screenRemembering(
    screener(),
    [
      { field: 'payer.phone', type: 'phone', value: incoming.payer.phone },
      { field: 'payer.name', type: 'name', value: incoming.payer.name },
      { field: 'payer.address', type: 'crypto_address', value: incoming.payer.address },
    ],
    owner ?? null,
  );
  const status: DepositStatus = hit ? 'held' : owner ? 'completed' : 'unmatched';
  const result = await inTransaction(async (tx) => {
    const recorded = await recordDeposit(
      {
        userId: status === 'unmatched' ? null : (owner ?? null),
        channel: incoming.channel,
        rail: incoming.rail,
        currency: incoming.currency,
        amountMinor: incoming.amountMinor.toString(),
        status,
        providerReference: incoming.providerReference,
        providerOutput: incoming.providerOutput ?? '',
        quotedReference: incoming.quotedReference ?? null,
        payerPhone: incoming.payer.phone ?? null,
        payerName: incoming.payer.name ?? null,
        payerAddress: incoming.payer.address ?? null,
      },
      tx,
    );
    if (!recorded.created) return recorded;
    const d = recorded.row;
    const posting = { channel: d.channel, userId: d.user_id, currency: incoming.currency, amountMinor: d.amount_minor };
    if (status === 'completed') {
      return { row: await creditWithinCap(tx, d, posting), created: true };
    } else {
      const suspense = status === 'held' ? SUSPENSE_COMPLIANCE : SUSPENSE_UNMATCHED;
      await postLines(tx, {
        depositId: d.id,
        kind: 'deposit_held',
        currency: d.currency,
        lines: depositLines('deposit_held', posting, suspense),
      });
    }
    if (hit) await recordScreeningHit({ context: 'deposit', match: hit, userId: d.user_id, depositId: d.id }, tx);
    return recorded;
  });
  if (result.created) {
    log.info(
      { depositId: result.row.id, channel: incoming.channel, rail: incoming.rail, status: result.row.status, userId: result.row.user_id },
      'money in recorded',
    );
  }
  return result;
}

/** Whether a deposit of this transaction was recorded before its outputs were told apart (by its id alone). */
export async function legacyDeposit(channel: DepositChannel, providerReference: string): Promise<boolean> {
  return (await depositByProviderReference(channel, providerReference, ''))?.provider_output === '';
}

export interface DepositView {
  deposit_id: string;
  status: DepositStatus;
  channel: DepositChannel;
  currency: string;
  amount: string;
  /** The provider's transaction id (M-Pesa receipt or TransID, bank reference, txid). */
  provider_reference: string | null;
  failure_code: string | null;
  failure_reason: string | null;
  created_at: string;
  updated_at: string;
}

export const depositView = (d: DepositRow): DepositView => ({
  deposit_id: d.id,
  status: d.status,
  channel: d.channel,
  currency: d.currency,
  amount: formatAmount(d.amount_minor, d.currency as Currency),
  provider_reference: d.provider_reference,
  failure_code: d.failure_code,
  failure_reason: d.failure_reason,
  created_at: new Date(d.created_at).toISOString(),
  updated_at: new Date(d.updated_at).toISOString(),
});

/**
 * Credit money that has arrived, exactly once per provider transaction (see `recordMoneyIn`): the deposit
 * as the API shows it, and whether this call made it.
 */
export async function creditIncoming(incoming: IncomingMoney): Promise<{ deposit: DepositView; created: boolean }> {
  const { row, created } = await recordMoneyIn(incoming);
  return { deposit: depositView(row), created };
}

/**
 * Refuse, before anything is asked of the payer, a deposit that would visibly take the wallet past its KYC
 * tier's cap: what it holds, plus deposits still on their way, plus this one. (Money that arrives anyway is
 * held in suspense by the crediting path, which the database keeps exact.)
 */
export async function depositOverCap(userId: string, currency: Currency, amountMinor: bigint): Promise<LimitBreach | null> {
  const [balances, pending, kyc] = await Promise.all([walletBalances(userId), pendingInForUser(userId), kycStatusOf(userId)]);
  const have = BigInt(balances.find((b) => b.currency === currency)?.balance ?? '0');
  const coming = BigInt(pending.find((p) => p.currency === currency)?.pending ?? '0');
  const { limits } = config();
  return evaluateBalanceCap(kyc ?? 'unverified', toKesMinor(have + coming + amountMinor, currency, limits.fxToKes), limits);
}
