import { AppError, notFound, validationError } from '../platform/errors';
import { isUuid } from '../platform/ids';
import { componentLogger } from '../platform/logger';
import { CURRENCIES, formatAmount, isCurrency, parseAmount, type Currency } from '../domain/money';
import { CRYPTO_ASSETS, depositLines, isCryptoAsset, walletAccount, type DepositStatus } from '../domain/wallets';
import { RailError } from '../connectors';
import {
  assignUnmatched,
  findDeposit,
  listUnmatched,
  openPendingDeposit,
  pendingInForUser,
  settlePendingDeposit,
  type DepositRow,
} from '../repositories/deposits';
import { startDepositWorkflow } from '../workflows/client';
import { normaliseKenyanPhone } from '../domain/phone';
import { config } from '../platform/config';
import { refuseOnScreeningHit } from './screening';
import { railConnectors } from './connectors';
import { creditUnderCap, depositOverCap, depositView, type DepositView } from './money-in';
import { needsFourEyes, requestApproval, type ApprovalRequestView } from './approvals';
import type { ApprovalRecord } from '../repositories/approvals';
import type { Tx } from '../repositories/transaction';
import { accountStatement, heldForUser, postLines, walletBalances } from '../repositories/ledger';
import { inTransaction } from '../repositories/transaction';
import { depositReferenceOf, findUser } from '../repositories/users';
import { isStaff, type Caller } from '../domain/caller';
import { recordStaffAction } from './audit';
import { assertKeyReachesRail } from './api-key-service';
import { decodeCursorKey, encodeCursor, pageLimit, UUID_PATTERN, decodeCursor, type Page } from './paging';

const log = componentLogger('wallets');

// ---------------------------------------------------------------------------------------------
// Crypto deposit addresses (docs/wallets.md#crypto-deposits)

export interface DepositAddress {
  currency: Currency;
  /** Where to send the asset: Paygate's deposit address at the exchange. */
  address: string;
  /** The network to send on (ccxt's network code, e.g. TRC20); null when the exchange did not say. */
  network: string | null;
  /** Put this in the transfer's memo (tag): it is your deposit reference, and how the deposit finds your wallet. */
  tag: string;
  /** How the money arrives, in a sentence. */
  instructions: string;
}

const NETWORK_PATTERN = /^[A-Z0-9_]{2,20}$/;

/**
 * Where the caller sends an asset to fund their wallet: the exchange account's deposit address (ccxt
 * `fetchDepositAddress`), with the caller's deposit reference as the memo. The `match-crypto-deposits` job
 * credits each confirmed deposit once per txid. On the sandbox rail the address is a placeholder and money
 * arrives through the admin simulator.
 */
export async function depositAddress(caller: Caller, currency: string, network?: string): Promise<DepositAddress> {
  if (!isCryptoAsset(currency)) throw validationError('currency', `crypto deposits take ${CRYPTO_ASSETS.join(', ')}`);
  if (network !== undefined && !NETWORK_PATTERN.test(network)) {
    throw validationError('network', 'must be a network code such as TRC20, ERC20 or BTC');
  }
  assertKeyReachesRail(caller, config().rails.crypto, 'a crypto deposit');
  const tag = (await depositReferenceOf(caller.id)) ?? '';
  const exchange = railConnectors().depositAddresses;
  if (!exchange) {
    return {
      currency,
      address: `sandbox-${currency.toLowerCase()}-deposit-address`,
      network: network ?? 'sandbox',
      tag,
      instructions:
        'The crypto rail is the sandbox: nothing can be sent here. An admin makes a deposit arrive with POST /sandbox/crypto-deposits.',
    };
  }
  try {
    const found = await exchange.depositAddress(currency, network);
    return {
      currency,
      address: found.address,
      network: found.network,
      tag,
      instructions: `Send ${currency}${found.network ? ` on ${found.network}` : ''} to this address with ${tag} as the memo (tag). It is credited once the exchange confirms it; a deposit without the memo waits for staff to assign it.`,
    };
  } catch (err) {
    if (!(err instanceof RailError)) throw err;
    // The exchange's own words stay in our log: they may name our account, its keys' rights or its setup
    // (docs/conventions.md#errors); the client is told what it can act on, and nothing of the provider.
    log.warn(
      { currency, network, failureCode: err.failureCode, providerError: err.providerText ?? err.message },
      'the exchange gave no deposit address',
    );
    // The exchange refused the asset on that network (a bad request); anything else is the exchange's trouble.
    if (network !== undefined && !err.retryable && err.failureCode !== 'provider_auth_failed') {
      throw validationError('network', `the exchange gives no ${currency} deposit address on ${network}`);
    }
    throw new AppError('dependency_unavailable', 'the exchange did not give a deposit address; try again later');
  }
}

// ---------------------------------------------------------------------------------------------
// Reading wallets (docs/wallets.md#balances)

export interface WalletBalance {
  currency: Currency;
  /** Spendable now. */
  available: string;
  /** Reserved: payouts in flight (amount and fee), and what the caller's P2P ads hold in escrow. */
  held: string;
  /** Deposits started and not yet confirmed. */
  pending_in: string;
  /** When the balance last moved; null for a wallet that never had an entry. */
  updated_at: string | null;
}

export interface Wallets {
  user_id: string;
  /** Quote it when paying in: the M-Pesa paybill account number, or a bank transfer's narrative. */
  deposit_reference: string;
  data: WalletBalance[];
}

/** Whose wallets the caller may read: their own, or with `user_id` anyone's for staff (others: 404). */
async function walletOwner(caller: Caller, userId: string | undefined): Promise<string> {
  if (userId === undefined || userId === caller.id) return caller.id;
  // The same answer whether or not the user exists, and without echoing the id.
  if (!isStaff(caller) || !(await findUser(userId))) throw new AppError('not_found', 'no such user');
  return userId;
}

/** One balance per currency Paygate moves, for the caller (or, for staff, the user named). */
export async function getWallets(caller: Caller, userId?: string): Promise<Wallets> {
  const owner = await walletOwner(caller, userId);
  const [balances, held, pending, reference] = await Promise.all([
    walletBalances(owner),
    heldForUser(owner),
    pendingInForUser(owner),
    depositReferenceOf(owner),
  ]);
  const byCurrency = <T extends { currency: string }>(rows: T[]) => new Map(rows.map((r) => [r.currency, r]));
  const balanceOf = byCurrency(balances);
  const heldOf = byCurrency(held);
  const pendingOf = byCurrency(pending);
  return {
    user_id: owner,
    deposit_reference: reference ?? '',
    data: CURRENCIES.map((currency) => ({
      currency,
      available: formatAmount(balanceOf.get(currency)?.balance ?? '0', currency),
      held: formatAmount(heldOf.get(currency)?.held ?? '0', currency),
      pending_in: formatAmount(pendingOf.get(currency)?.pending ?? '0', currency),
      updated_at: balanceOf.get(currency)?.updated_at.toISOString() ?? null,
    })),
  };
}

export interface StatementLine {
  entry_id: string;
  at: string;
  /** The posting: `deposit`, `deposit_released`, `hold`, `release`, `reverse` … */
  kind: string;
  /** Signed: positive into the wallet, negative out of it. */
  amount: string;
  /** The wallet's balance once this line applied, exactly as the ledger stored it. */
  balance_after: string;
  order_id: string | null;
  deposit_id: string | null;
  /** The P2P ad the posting belongs to: its escrow funded or returned. */
  ad_id: string | null;
  description: string;
}

const DESCRIPTIONS: Record<string, string> = {
  deposit: 'Deposit',
  deposit_released: 'Deposit released to the wallet',
  hold: 'Payment: funds held',
  release: 'Payment failed: hold released',
  reverse: 'Refund',
  refund: 'Refund',
  escrow_lock: 'P2P: escrow locked',
  escrow_release: 'P2P: escrow released',
  escrow_return: 'P2P: escrow returned',
  escrow_reverse: 'P2P: trade reversed',
  wallet_migration: 'Balance carried over from before wallets',
  ad_fund: 'P2P: ad funded into escrow',
  ad_return: 'P2P: ad escrow returned',
  trade_fiat: 'P2P trade: KES leg',
  trade_asset: 'P2P trade: asset leg',
  trade_fiat_reverse: 'P2P trade reversed: KES leg',
  trade_asset_reverse: 'P2P trade reversed: asset leg',
};

const ENTRY_ID = /^[1-9]\d{0,18}$/;

/** The statement of one wallet, newest first, keyset-paged; `balance_after` is the stored running balance. */
export async function walletStatement(
  caller: Caller,
  currency: string,
  q: { user_id?: string; limit?: number; cursor?: string },
): Promise<Page<StatementLine>> {
  if (!isCurrency(currency)) throw validationError('currency', `must be one of ${CURRENCIES.join(', ')}`);
  const owner = await walletOwner(caller, q.user_id);
  const limit = pageLimit(q.limit);
  const before = q.cursor === undefined ? null : decodeCursorKey(q.cursor, [ENTRY_ID])[0];
  const rows = await accountStatement(walletAccount(owner, currency), currency, before, limit + 1);
  const page = rows.slice(0, limit);
  return {
    data: page.map((r) => ({
      entry_id: r.entry_id,
      at: new Date(r.at).toISOString(),
      kind: r.kind,
      amount: formatAmount(r.direction === 'credit' ? r.amount_minor : `-${r.amount_minor}`, currency),
      balance_after: formatAmount(r.balance_after_minor, currency),
      order_id: r.order_id,
      deposit_id: r.deposit_id,
      ad_id: r.ad_id,
      description: DESCRIPTIONS[r.kind] ?? r.kind,
    })),
    next_cursor: rows.length > limit ? encodeCursor(page[page.length - 1].entry_id) : null,
  };
}

// ---------------------------------------------------------------------------------------------
// Deposits: one crediting path for every way in

export interface UnmatchedDepositView extends DepositView {
  /** The reference the payer quoted, which matched nobody. */
  quoted_reference: string | null;
  payer_phone: string | null;
  payer_name: string | null;
}

const unmatchedView = (d: DepositRow): UnmatchedDepositView => ({
  ...depositView(d),
  quoted_reference: d.quoted_reference,
  payer_phone: d.payer_phone,
  payer_name: d.payer_name,
});

export interface DepositRequestInput {
  amount: string;
  currency: string;
  method: string;
  phone: string;
}

export interface DepositAccepted {
  deposit_id: string;
  status: DepositStatus;
  links: { self: string };
}

async function refuseOverCap(userId: string, currency: Currency, amountMinor: bigint): Promise<void> {
  const breach = await depositOverCap(userId, currency, amountMinor);
  if (breach) throw new AppError(breach.code, breach.reason);
}

/**
 * Start an M-Pesa STK Push deposit: the payer's phone is asked to pay, by workflow `deposit-<deposit_id>`,
 * and the wallet is credited when the rail confirms it. The phone is screened first (422
 * `blocked_by_compliance`). When Temporal does not take the workflow, the deposit is failed at once and the
 * answer is 503: no prompt was sent and nothing moved.
 */
export async function startStkDeposit(caller: Caller, body: DepositRequestInput): Promise<DepositAccepted> {
  if (body.currency !== 'KES') throw validationError('currency', 'M-Pesa deposits are in KES');
  if (body.method !== 'mobile_money') throw validationError('method', 'must be mobile_money (M-Pesa STK Push)');
  const amountMinor = parseAmount(body.amount, 'KES');
  if (amountMinor % 100n !== 0n) throw validationError('amount', 'M-Pesa takes whole shillings, e.g. "2000.00"');
  const phone = normaliseKenyanPhone(body.phone);
  if (!phone) throw validationError('phone', 'must be a Kenyan mobile number, e.g. +254712345678');
  assertKeyReachesRail(caller, config().rails.mobile_money, 'an M-Pesa deposit');
  await refuseOnScreeningHit('deposit', caller.id, [{ field: 'phone', type: 'phone', value: phone }]);
  await refuseOverCap(caller.id, 'KES', amountMinor);
  const deposit = await openPendingDeposit({
    userId: caller.id,
    channel: 'mpesa_stk',
    rail: config().rails.mobile_money,
    currency: 'KES',
    amountMinor: amountMinor.toString(),
    payerPhone: phone,
  });
  try {
    await startDepositWorkflow(deposit.id);
  } catch (err) {
    log.error(
      { depositId: deposit.id, err },
      'the deposit workflow could not be started; the deposit is failed, nothing was asked of the payer',
    );
    await inTransaction((tx) =>
      settlePendingDeposit(
        deposit.id,
        { status: 'failed', failureCode: 'dependency_unavailable', reason: 'the deposit could not be started' },
        tx,
      ),
    );
    throw new AppError('dependency_unavailable', 'deposits cannot be started right now; nothing was charged, try again shortly');
  }
  log.info({ depositId: deposit.id, userId: caller.id }, 'STK Push deposit started');
  return { deposit_id: deposit.id, status: 'pending', links: { self: `/api/v1/wallets/deposits/${deposit.id}` } };
}

/** One deposit: its owner's, or anyone's for staff; others get 404. */
export async function getDeposit(caller: Caller, depositId: string): Promise<DepositView> {
  if (!isUuid(depositId)) throw validationError('deposit_id', 'must be a UUID');
  const d = await findDeposit(depositId);
  if (!d || (d.user_id !== caller.id && !isStaff(caller))) throw notFound(`deposit ${depositId}`);
  return depositView(d);
}

/** Money that arrived with a reference nobody has, newest first (staff). */
export async function unmatchedDeposits(q: { limit?: number; cursor?: string }): Promise<Page<UnmatchedDepositView>> {
  const limit = pageLimit(q.limit);
  const before = q.cursor === undefined ? null : decodeCursor(q.cursor);
  const rows = await listUnmatched(before, limit + 1);
  const page = rows.slice(0, limit);
  return { data: page.map(unmatchedView), next_cursor: rows.length > limit ? encodeCursor(page[page.length - 1].id) : null };
}

/** The kind of four-eyes request an assignment above the threshold makes. */
export const ASSIGN_UNMATCHED_DEPOSIT = 'assign_unmatched_deposit';

/** What assigning did: the deposit credited now, or the four-eyes request that waits for a second staff member. */
export type Assignment = { assigned: DepositView } | { pending: ApprovalRequestView };

const selfAssignment = () =>
  new AppError('forbidden', 'staff never assign unmatched money to themselves: another staff member must decide it');

/**
 * Credit an unmatched deposit to the user staff name, once: `suspense:unmatched → wallet`, within the wallet's
 * KYC tier cap (past it: 422 with the cap's code, and the money stays unmatched). Never to the staff member
 * themselves (403). Above `FOUR_EYES_ABOVE_KES` nothing moves yet: a four-eyes request is recorded, and the
 * assignment happens when a second staff member approves it. A deposit that is not unmatched (already
 * assigned, or never unmatched) is a 409.
 */
export async function assignDeposit(caller: Caller, depositId: string, userId: string): Promise<Assignment> {
  if (!isUuid(depositId)) throw validationError('deposit_id', 'must be a UUID');
  if (!UUID_PATTERN.test(userId) || !(await findUser(userId))) throw validationError('user_id', 'must be the id of a user');
  if (userId === caller.id) throw selfAssignment();
  const deposit = await findDeposit(depositId);
  if (!deposit) throw notFound(`deposit ${depositId}`);
  if (deposit.status !== 'unmatched') throw notUnmatched(deposit);
  const currency = deposit.currency as Currency;
  const amountMinor = BigInt(deposit.amount_minor);
  if (needsFourEyes(amountMinor, currency)) {
    // Refused now rather than at approval when the wallet visibly cannot take it.
    const breach = await depositOverCap(userId, currency, amountMinor);
    if (breach) throw new AppError(breach.code, breach.reason);
    const pending = await requestApproval(caller, {
      kind: ASSIGN_UNMATCHED_DEPOSIT,
      subjectId: depositId,
      currency,
      amountMinor,
      payload: { user_id: userId },
    });
    log.info(
      { depositId, userId, requestedBy: caller.id, requestId: pending.request_id },
      'unmatched deposit assignment waits for a second staff member',
    );
    return { pending };
  }
  const assigned = await inTransaction(async (tx) => {
    const done = await assignWithinCap(depositId, userId, caller.id, tx);
    await recordStaffAction(tx, { by: caller, ...assignmentAudit(done, null) });
    return done;
  });
  log.info({ depositId, userId, assignedBy: caller.id }, 'unmatched deposit assigned');
  return { assigned: depositView(assigned) };
}

/** An assignment's audit entry (docs/compliance.md#audit-trail); `approvalId` when a four-eyes request was approved. */
const assignmentAudit = (d: DepositRow, approvalId: string | null) => ({
  action: 'deposit.assigned' as const,
  subjectType: 'deposit' as const,
  subjectId: d.id,
  before: { status: 'unmatched', user_id: null },
  after: {
    status: d.status,
    user_id: d.user_id,
    currency: d.currency,
    amount_minor: String(d.amount_minor),
    approval_request_id: approvalId,
  },
});

const notUnmatched = (d: DepositRow) =>
  new AppError('conflict', `deposit ${d.id} is ${d.status}, not unmatched: it can be assigned only once`);

/**
 * The assignment itself, in `tx`: the deposit gets its owner and the money its wallet, or, past the wallet's
 * cap, neither (422 with the cap's code). Of two assignments racing, one wins and the other is a 409.
 */
async function assignWithinCap(depositId: string, userId: string, assignedBy: string, tx: Tx): Promise<DepositRow> {
  const deposit = await findDeposit(depositId, tx);
  if (!deposit) throw notFound(`deposit ${depositId}`);
  const currency = deposit.currency as Currency;
  let assigned: DepositRow | undefined;
  const breach = await creditUnderCap(tx, userId, currency, async (sp) => {
    assigned = await assignUnmatched(depositId, { userId, assignedBy }, sp);
    if (!assigned) return false;
    const posting = { channel: assigned.channel, userId, currency, amountMinor: assigned.amount_minor };
    await postLines(sp, { depositId, kind: 'deposit_released', currency, lines: depositLines('deposit_released', posting) });
    return true;
  });
  if (breach) {
    log.warn({ depositId, userId, failureCode: breach.code }, 'unmatched deposit not assigned: the wallet would pass its cap');
    throw new AppError(breach.code, `${breach.reason}; the deposit stays unmatched`);
  }
  if (!assigned) throw notUnmatched((await findDeposit(depositId, tx)) ?? deposit);
  return assigned;
}

/**
 * A four-eyes assignment approved by a second staff member: it runs now, in the approval's transaction, under
 * the same rules (never to the approver themselves, within the cap, once).
 */
export async function performApprovedAssignment(request: ApprovalRecord, approver: Caller, tx: Tx): Promise<Record<string, unknown>> {
  const userId = request.payload.user_id;
  if (typeof userId !== 'string' || !UUID_PATTERN.test(userId)) throw new AppError('conflict', 'the request names no user to assign to');
  if (userId === approver.id) throw selfAssignment();
  const assigned = await assignWithinCap(request.subjectId, userId, request.requestedBy, tx);
  await recordStaffAction(tx, { by: approver, ...assignmentAudit(assigned, request.id) });
  log.info(
    { depositId: assigned.id, userId, requestedBy: request.requestedBy, approvedBy: approver.id },
    'unmatched deposit assigned on approval',
  );
  return { deposit: depositView(assigned) };
}
