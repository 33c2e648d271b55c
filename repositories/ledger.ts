import { DatabaseError, QueryTypes, type Transaction } from 'sequelize';
import { models } from '../models';
import { queryRows } from './transaction';
import { uuidv7 } from '../platform/ids';
import { payerWallet, paymentLines, type LedgerKind, type LedgerLine, type PaymentAccounts } from '../domain/ledger';
import type { ClassBalance } from '../domain/reconciliation';

/**
 * The double-entry ledger (`ledger_transactions`, `ledger_entries`) and the balances it keeps (`accounts`).
 * Each posting is one transaction row, unique per (order, kind), and its balanced entries: posting the
 * same kind for the same order twice is a no-op, so retries and replays never move money twice. The
 * database refuses updates, deletes and unbalanced transactions, moves each account's balance with each
 * entry (a trigger), and refuses any entry that would take a `wallet:`, `hold:`, `escrow:` or `suspense:`
 * account below zero. Which lines a posting makes is pure logic, in `domain/ledger.ts`.
 */

/** A posting the database refused because it would overdraw a guarded account. */
export class InsufficientFunds extends Error {
  constructor(readonly account: string) {
    super(`insufficient funds in ${account}`);
    this.name = 'InsufficientFunds';
  }
}

const OVERDRAFT_CONSTRAINT = 'accounts_funds_never_negative';

/** Turn the database's overdraft refusal into `InsufficientFunds`; anything else is rethrown as it is. */
function overdraftOf(err: unknown, lines: LedgerLine[]): InsufficientFunds | undefined {
  // As Sequelize wraps it, or as pg raises it (statements run straight through pg).
  const original = (err instanceof DatabaseError ? err.original : err) as { constraint?: string; detail?: string } | undefined;
  if (!(err instanceof Error) || original?.constraint !== OVERDRAFT_CONSTRAINT) return undefined;
  const account = lines.find((l) => l.direction === 'debit' && original.detail?.includes(`(${l.account},`))?.account;
  return new InsufficientFunds(account ?? lines.find((l) => l.direction === 'debit')?.account ?? 'an account');
}

/**
 * Post `kind` for the payment inside `tx`; returns false when it was already posted. A release or a refund
 * goes back to the account the hold debited (a wallet, or for payments held before wallets, `user:<id>`).
 */
export async function postPayment(tx: Transaction, kind: LedgerKind, p: PaymentAccounts): Promise<boolean> {
  const payer =
    kind === 'release' ? await holdPayer(p.orderId, tx) : kind === 'reverse' ? await refundPayer(p.orderId, payerWallet(p), tx) : undefined;
  return postLines(tx, { orderId: p.orderId, kind, currency: p.currency, lines: paymentLines(kind, { ...p, payer: payer ?? p.payer }) });
}

/**
 * Where money paid back on an order goes (a reversal, a refund): the account its hold debited, except for an item
 * of a bulk payout, held from its batch's hold, which is paid back to the wallet (the batch may have ended).
 */
export async function refundPayer(orderId: string, wallet: string, tx: Transaction): Promise<string | undefined> {
  const held = await holdPayer(orderId, tx);
  return held?.startsWith('hold:batch:') ? wallet : held;
}

/** The account the order's hold debited, or undefined when nothing was held. */
export async function holdPayer(orderId: string, tx: Transaction): Promise<string | undefined> {
  const [row] = await models().query<{ account: string }>(
    `SELECT e.account FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
      WHERE t.order_id = :orderId AND t.kind = 'hold' AND e.direction = 'debit'`,
    { replacements: { orderId }, type: QueryTypes.SELECT, transaction: tx },
  );
  return row?.account;
}

/**
 * Post one balanced transaction of `kind` for an order, a deposit or a P2P ad inside `tx`, once per
 * (order, kind), (deposit, kind) or (ad, kind): returns false when it was already posted. Other features
 * (P2P escrow and trades, deposits) post their own kinds through here.
 */
export async function postLines(
  tx: Transaction,
  posting: (
    | { orderId: string; depositId?: undefined; adId?: undefined; refundId?: string; railChargeId?: undefined; payoutBatchId?: undefined }
    | { depositId: string; orderId?: undefined; adId?: undefined; railChargeId?: undefined; payoutBatchId?: undefined }
    | { adId: string; orderId?: undefined; depositId?: undefined; railChargeId?: undefined; payoutBatchId?: undefined }
    | { railChargeId: string; orderId?: undefined; depositId?: undefined; adId?: undefined; payoutBatchId?: undefined }
    | { payoutBatchId: string; orderId?: undefined; depositId?: undefined; adId?: undefined; railChargeId?: undefined }
  ) & {
    kind: string;
    currency: string;
    lines: LedgerLine[];
  },
): Promise<boolean> {
  // The transaction row and its entries in one statement (every payment step posts: straight through pg, see
  // queryRows). A posting already made inserts no transaction row, and so no entries.
  // Entries apply in insertion order, each taking its account's row lock: one order for every posting
  // (by account) means two postings over the same accounts can never wait on each other in a cycle.
  const lines = [...posting.lines].sort((a, b) => (a.account < b.account ? -1 : a.account > b.account ? 1 : 0));
  try {
    const [row] = await queryRows<{ posted: boolean }>(
      `WITH t AS (
         INSERT INTO ledger_transactions (id, order_id, deposit_id, ad_id, refund_id, kind, currency, rail_charge_id, payout_batch_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $11, $12)
         ON CONFLICT DO NOTHING RETURNING id
       ), e AS (
         INSERT INTO ledger_entries (transaction_id, account, currency, direction, amount_minor)
         SELECT t.id, l.account, $7, l.direction, l.amount_minor
           FROM t, unnest($8::text[], $9::text[], $10::numeric[]) WITH ORDINALITY AS l (account, direction, amount_minor, n)
          ORDER BY l.n
       )
       SELECT EXISTS (SELECT 1 FROM t) AS posted`,
      [
        uuidv7(),
        posting.orderId ?? null,
        posting.depositId ?? null,
        posting.adId ?? null,
        ('refundId' in posting ? posting.refundId : undefined) ?? null,
        posting.kind,
        posting.currency,
        lines.map((l) => l.account),
        lines.map((l) => l.direction),
        lines.map((l) => l.amountMinor),
        posting.railChargeId ?? null,
        posting.payoutBatchId ?? null,
      ],
      tx,
    );
    return row.posted;
  } catch (err) {
    throw overdraftOf(err, lines) ?? err;
  }
}

/**
 * A payment's `hold` or `settle` posting as two CTEs (`ledger_t`, `ledger_e`) for a statement of another table's
 * repository, made only when its CTE `source` yields a row, with parameters from `$<first>`: the order's status
 * change and its posting in one round trip (`transitionOrder`). As in `postLines`: once per (order, kind),
 * entries in account order. A refusal of the overdraft is turned into `InsufficientFunds` by `asInsufficientFunds`.
 */
export function paymentPostingCtes(
  kind: 'hold' | 'settle',
  p: PaymentAccounts,
  source: string,
  first: number,
): { ctes: string; values: unknown[]; lines: LedgerLine[] } {
  const { values, lines } = paymentPosting(kind, p);
  const $ = (i: number) => `$${first + i}`;
  return {
    ctes: `ledger_t AS (
       INSERT INTO ledger_transactions (id, order_id, kind, currency)
       SELECT ${$(0)}::uuid, ${$(1)}::uuid, ${$(2)}::text, ${$(3)}::text FROM ${source}
       ON CONFLICT DO NOTHING RETURNING id
     ), ledger_e AS (
       INSERT INTO ledger_entries (transaction_id, account, currency, direction, amount_minor)
       SELECT ledger_t.id, l.account, ${$(3)}::text, l.direction, l.amount_minor
         FROM ledger_t, unnest(${$(4)}::text[], ${$(5)}::text[], ${$(6)}::numeric[]) WITH ORDINALITY AS l (account, direction, amount_minor, n)
        ORDER BY l.n
     )`,
    values: [values[0], p.orderId, kind, ...values.slice(1)],
    lines,
  };
}

/**
 * A payment's `hold` or `settle` posting as the parameters of a statement that makes it: its new transaction's id,
 * its currency, and its lines' accounts, directions and amounts, in account order (as `postLines` enters them).
 */
export function paymentPosting(
  kind: 'hold' | 'settle',
  p: PaymentAccounts,
): { values: [string, string, string[], string[], string[]]; lines: LedgerLine[] } {
  const lines = [...paymentLines(kind, p)].sort((a, b) => (a.account < b.account ? -1 : a.account > b.account ? 1 : 0));
  return {
    values: [uuidv7(), p.currency, lines.map((l) => l.account), lines.map((l) => l.direction), lines.map((l) => l.amountMinor)],
    lines,
  };
}

/** The database's overdraft refusal of a posting's `lines` as `InsufficientFunds`; undefined for anything else. */
export const asInsufficientFunds = (err: unknown, lines: LedgerLine[]): InsufficientFunds | undefined => overdraftOf(err, lines);

export async function postedKinds(orderId: string, tx?: Transaction): Promise<LedgerKind[]> {
  const rows = await models().query<{ kind: LedgerKind }>('SELECT kind FROM ledger_transactions WHERE order_id = :orderId', {
    replacements: { orderId },
    type: QueryTypes.SELECT,
    transaction: tx,
  });
  return rows.map((r) => r.kind);
}

/** Debits minus credits per currency over the whole ledger: every value must be "0". */
export async function ledgerImbalanceByCurrency(): Promise<Record<string, string>> {
  const rows = await models().query<{ currency: string; imbalance: string }>(
    `SELECT currency, sum(CASE direction WHEN 'debit' THEN amount_minor ELSE -amount_minor END)::text AS imbalance
       FROM ledger_entries GROUP BY currency`,
    { type: QueryTypes.SELECT },
  );
  return Object.fromEntries(rows.map((r) => [r.currency, r.imbalance]));
}

export interface Overpayment {
  order_id: string;
  payer: string;
  /** What the payer had paid at its lowest and highest point, and what the hold took (minor units). */
  lowest: string;
  highest: string;
  held: string;
}

/**
 * The payer's side of every payment: whoever the hold debited has, at every step of the order's payment
 * postings (hold, release, settle, reverse, and each partial refund), paid between zero and the amount held — never refunded more
 * than was taken, never charged more than the order. Returns the orders where that broke.
 */
export async function overpaidOrders(transaction?: Transaction): Promise<Overpayment[]> {
  return models().query<Overpayment>(
    `WITH holds AS (
       SELECT t.order_id, e.account AS payer, e.currency, e.amount_minor AS held
         FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
        WHERE t.kind = 'hold' AND e.direction = 'debit'
     ), steps AS (
       SELECT h.order_id, h.payer, h.held, min(e.id) AS seq,
              sum(CASE e.direction WHEN 'debit' THEN e.amount_minor ELSE -e.amount_minor END) AS net
         FROM holds h
         JOIN ledger_transactions t ON t.order_id = h.order_id AND t.kind IN ('hold', 'release', 'settle', 'reverse', 'refund')
         JOIN ledger_entries e ON e.transaction_id = t.id AND e.account = h.payer AND e.currency = h.currency
        GROUP BY h.order_id, h.payer, h.held, t.id
     ), running AS (
       SELECT order_id, payer, held, sum(net) OVER (PARTITION BY order_id, payer ORDER BY seq) AS paid FROM steps
     )
     SELECT order_id, payer, min(paid)::text AS lowest, max(paid)::text AS highest, held::text AS held
       FROM running GROUP BY order_id, payer, held
     HAVING min(paid) < 0 OR max(paid) > held`,
    { type: QueryTypes.SELECT, transaction },
  );
}

/** An account's balance (credits − debits, minor units); "0" for an account with no entries yet. */
/**
 * An account's balance (0 when it has none yet) as an expression of parameters `$<account>` and `$<currency>`,
 * for a statement of another table's repository to read it in the same round trip (`acceptOrder`).
 */
export const balanceExpression = (account: number, currency: number): string =>
  `coalesce((SELECT balance_minor FROM accounts WHERE account = $${account}::text AND currency = $${currency}::text), 0)`;

export async function balanceOf(account: string, currency: string, tx?: Transaction): Promise<string> {
  const [row] = await models().query<{ balance: string }>(
    'SELECT balance_minor::text AS balance FROM accounts WHERE account = :account AND currency = :currency',
    { replacements: { account, currency }, type: QueryTypes.SELECT, transaction: tx },
  );
  return row?.balance ?? '0';
}

export interface BalanceDrift {
  account: string;
  currency: string;
  /** What `accounts` stores, and what the entries add up to (minor units). */
  stored: string;
  entries: string;
}

/** Every account whose stored balance differs from the sum of its entries. Must be empty. */
export async function balanceDrift(transaction?: Transaction): Promise<BalanceDrift[]> {
  return models().query<BalanceDrift>(
    `WITH sums AS (
       SELECT account, currency, sum(CASE direction WHEN 'credit' THEN amount_minor ELSE -amount_minor END) AS total
         FROM ledger_entries GROUP BY account, currency
     )
     SELECT coalesce(a.account, s.account) AS account, coalesce(a.currency, s.currency) AS currency,
            coalesce(a.balance_minor, 0)::text AS stored, coalesce(s.total, 0)::text AS entries
       FROM accounts a FULL JOIN sums s ON s.account = a.account AND s.currency = a.currency
      WHERE coalesce(a.balance_minor, 0) <> coalesce(s.total, 0)`,
    { type: QueryTypes.SELECT, transaction },
  );
}

export interface RunningBalanceDrift {
  entry_id: string;
  account: string;
  /** What the entry stores as `balance_after_minor`, and the running sum of its account up to it. */
  stored: string;
  running: string;
}

/** Every entry whose stored `balance_after_minor` differs from its account's running sum. Must be empty. */
export async function runningBalanceDrift(transaction?: Transaction): Promise<RunningBalanceDrift[]> {
  return models().query<RunningBalanceDrift>(
    `SELECT id::text AS entry_id, account, balance_after_minor::text AS stored, running::text AS running
       FROM (SELECT id, account, balance_after_minor,
                    sum(CASE direction WHEN 'credit' THEN amount_minor ELSE -amount_minor END)
                      OVER (PARTITION BY account, currency ORDER BY id) AS running
               FROM ledger_entries) e
      WHERE balance_after_minor <> running`,
    { type: QueryTypes.SELECT, transaction },
  );
}

// --- wallets: balances and statements

export interface AccountBalanceRow {
  currency: string;
  balance: string;
  updated_at: Date;
}

/** The balances of a user's wallets, one row per currency that has one. */
export async function walletBalances(userId: string): Promise<AccountBalanceRow[]> {
  return models().query<AccountBalanceRow>(
    `SELECT currency, balance_minor::text AS balance, updated_at FROM accounts WHERE account = 'wallet:' || :userId || ':' || currency`,
    { replacements: { userId }, type: QueryTypes.SELECT },
  );
}

/** What is held for a user's payments in flight (their orders' `hold:` accounts), per currency. */
export async function heldForUser(userId: string): Promise<{ currency: string; held: string }[]> {
  return models().query<{ currency: string; held: string }>(
    `SELECT currency, sum(held)::text AS held FROM (
        SELECT a.currency, a.balance_minor AS held
          FROM orders o JOIN accounts a ON a.account = 'hold:' || o.id::text AND a.currency = o.currency
         WHERE o.user_id = :userId AND o.status IN ('pending', 'screening', 'processing') AND a.balance_minor > 0
        UNION ALL
        SELECT a.currency, a.balance_minor
          FROM p2p_ads ad JOIN accounts a ON a.account = 'escrow:' || ad.id::text
         WHERE ad.owner_id = :userId AND a.balance_minor > 0
      ) h GROUP BY currency`,
    { replacements: { userId }, type: QueryTypes.SELECT },
  );
}

export interface StatementRow {
  entry_id: string;
  at: Date;
  kind: string;
  direction: 'debit' | 'credit';
  amount_minor: string;
  balance_after_minor: string;
  order_id: string | null;
  deposit_id: string | null;
  ad_id: string | null;
}

/** One account's entries newest first, keyset-paged on the entry id (`before`: only entries below it). */
export async function accountStatement(account: string, currency: string, before: string | null, take: number): Promise<StatementRow[]> {
  return models().query<StatementRow>(
    `SELECT e.id::text AS entry_id, e.created_at AS at, t.kind, e.direction, e.amount_minor::text AS amount_minor,
            e.balance_after_minor::text AS balance_after_minor, t.order_id, t.deposit_id, t.ad_id
       FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id
      WHERE e.account = :account AND e.currency = :currency AND (CAST(:before AS bigint) IS NULL OR e.id < CAST(:before AS bigint))
      ORDER BY e.id DESC LIMIT :take`,
    { replacements: { account, currency, before, take }, type: QueryTypes.SELECT },
  );
}

// --- reconciliation

/**
 * Stored balances summed per currency and account class (wallets, holds, escrows, suspense, fees, other),
 * with each `rail:` account on its own line: what float reconciliation sets against the rails.
 */
export async function classBalances(): Promise<ClassBalance[]> {
  return models().query<ClassBalance>(
    `SELECT currency, cls AS account, sum(balance_minor)::text AS balance_minor
       FROM (SELECT currency, balance_minor,
                    CASE WHEN account LIKE 'rail:%' OR account = 'revenue:fees' THEN account
                         WHEN account LIKE 'wallet:%' THEN 'wallet:'
                         WHEN account LIKE 'hold:%' THEN 'hold:'
                         WHEN account LIKE 'escrow:%' THEN 'escrow:'
                         WHEN account LIKE 'suspense:%' THEN 'suspense:'
                         WHEN account LIKE 'expense:%' THEN 'expense:'
                         ELSE 'other' END AS cls
               FROM accounts) a
      GROUP BY currency, cls`,
    { type: QueryTypes.SELECT },
  );
}
