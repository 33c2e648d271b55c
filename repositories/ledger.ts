import { QueryTypes, type Transaction } from 'sequelize';
import { models } from '../models';
import { uuidv7 } from '../platform/ids';
import { paymentLines, type LedgerKind, type LedgerLine, type PaymentAccounts } from '../domain/ledger';

/**
 * The double-entry ledger (`ledger_transactions`, `ledger_entries`). Each posting is one transaction row,
 * unique per (order, kind), and its balanced entries: posting the same kind for the same order twice is a
 * no-op, so retries and replays never move money twice. The database refuses updates, deletes and
 * unbalanced transactions. Which lines a posting makes is pure logic, in `domain/ledger.ts`.
 */

/** Post `kind` for the payment inside `tx`; returns false when it was already posted. */
export async function postPayment(tx: Transaction, kind: LedgerKind, p: PaymentAccounts): Promise<boolean> {
  return postLines(tx, { orderId: p.orderId, kind, currency: p.currency, lines: paymentLines(kind, p) });
}

/**
 * Post one balanced transaction of `kind` for an order inside `tx`, once per (order, kind): returns false
 * when it was already posted. Other features (P2P escrow) post their own kinds through here.
 */
export async function postLines(
  tx: Transaction,
  posting: { orderId: string; kind: string; currency: string; lines: LedgerLine[] },
): Promise<boolean> {
  const id = uuidv7();
  const inserted = await models().query<{ id: string }>(
    `INSERT INTO ledger_transactions (id, order_id, kind, currency) VALUES (:id, :orderId, :kind, :currency)
     ON CONFLICT (order_id, kind) DO NOTHING RETURNING id`,
    {
      replacements: { id, orderId: posting.orderId, kind: posting.kind, currency: posting.currency },
      type: QueryTypes.SELECT,
      transaction: tx,
    },
  );
  if (inserted.length === 0) return false;
  const lines = posting.lines;
  const values = lines.map((_, i) => `(:tx, :account${i}, :currency, :direction${i}, :amount${i})`).join(', ');
  const replacements: Record<string, string> = { tx: id, currency: posting.currency };
  lines.forEach((line, i) => {
    replacements[`account${i}`] = line.account;
    replacements[`direction${i}`] = line.direction;
    replacements[`amount${i}`] = line.amountMinor;
  });
  await models().query(`INSERT INTO ledger_entries (transaction_id, account, currency, direction, amount_minor) VALUES ${values}`, {
    replacements,
    transaction: tx,
  });
  return true;
}

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

export interface Overdraft {
  account: string;
  currency: string;
  /** The lowest balance the account reached, in minor units (negative). */
  lowest: string;
}

/**
 * Internal accounts (`hold:`, `escrow:`, `rail:`) hold money the platform has taken in; each must never be
 * overdrawn: their balance (credits − debits), replayed transaction by transaction in posting order,
 * never goes below zero. `user:` accounts are the customers' side and are checked per order instead
 * (`overpaidOrders`). Returns every account that went below zero, with its lowest balance.
 */
export async function ledgerOverdrafts(transaction?: Transaction): Promise<Overdraft[]> {
  return models().query<Overdraft>(
    `WITH postings AS (
       SELECT e.account, e.currency, min(e.id) AS seq,
              sum(CASE e.direction WHEN 'credit' THEN e.amount_minor ELSE -e.amount_minor END) AS net
         FROM ledger_entries e
        WHERE e.account LIKE 'hold:%' OR e.account LIKE 'escrow:%' OR e.account LIKE 'rail:%'
        GROUP BY e.account, e.currency, e.transaction_id
     ), running AS (
       SELECT account, currency, sum(net) OVER (PARTITION BY account, currency ORDER BY seq) AS balance FROM postings
     )
     SELECT account, currency, min(balance)::text AS lowest FROM running GROUP BY account, currency HAVING min(balance) < 0`,
    { type: QueryTypes.SELECT, transaction },
  );
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
 * postings (hold, release, settle, reverse), paid between zero and the amount held — never refunded more
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
         JOIN ledger_transactions t ON t.order_id = h.order_id AND t.kind IN ('hold', 'release', 'settle', 'reverse')
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
