import { QueryTypes } from 'sequelize';
import { models } from '../models';
import type { FoundBreak, LineDirection, Period } from '../domain/reconciliation-lines';
import { uuidv7 } from '../platform/ids';
import type { Tx } from './transaction';

/**
 * Reconciliation line by line (docs/wallets.md#reconciliation-line-by-line): the ledger's movements of a rail
 * account read as lines, and the breaks (`reconciliation_breaks`) found against a rail's own record.
 */

export interface LedgerLineRow {
  direction: LineDirection;
  reference: string | null;
  currency: string;
  amount_minor: string;
  at: Date;
  deposit_id: string | null;
  order_id: string | null;
}

/**
 * The movements of `rail:<method>` in a window that belong to the connector `rail`, as lines: a debit
 * (money into the rail: a deposit, a payout returned) is `in`, a credit (a payout) is `out`. Each names its
 * provider reference: the deposit's provider transaction id, the order's rail reference, or the charge's
 * line on the rail's record (a provider charge posted to `expense:rail_fees`).
 */
export async function ledgerRailLines(method: string, rail: string, window: Period): Promise<LedgerLineRow[]> {
  return models().query<LedgerLineRow>(
    `SELECT CASE e.direction WHEN 'debit' THEN 'in' ELSE 'out' END AS direction,
            coalesce(d.provider_reference, o.rail_reference, o.rail_client_reference, c.provider_reference) AS reference,
            e.currency, e.amount_minor::text AS amount_minor, coalesce(c.charged_at, e.created_at) AS at, t.deposit_id, t.order_id
       FROM ledger_entries e
       JOIN ledger_transactions t ON t.id = e.transaction_id
       LEFT JOIN deposits d ON d.id = t.deposit_id
       LEFT JOIN orders o ON o.id = t.order_id
       LEFT JOIN rail_charges c ON c.id = t.rail_charge_id
      WHERE e.account = :account AND coalesce(c.charged_at, e.created_at) >= :from AND coalesce(c.charged_at, e.created_at) < :to
        AND (t.deposit_id IS NOT NULL OR t.order_id IS NOT NULL OR t.rail_charge_id IS NOT NULL)
        AND coalesce(d.rail, o.rail, c.rail) = :rail
      ORDER BY e.id`,
    {
      replacements: { account: `rail:${method}`, rail, from: window.from.toISOString(), to: window.to.toISOString() },
      type: QueryTypes.SELECT,
    },
  );
}

export interface BreakRow {
  id: string;
  rail: string;
  method: string;
  kind: string;
  direction: LineDirection;
  reference: string;
  currency: string;
  rail_amount_minor: string | null;
  ledger_amount_minor: string | null;
  rail_lines: number;
  ledger_lines: number;
  day: string;
  deposit_ids: string[];
  order_ids: string[];
  status: 'open' | 'resolved';
  found_at: Date;
  resolved_by: string | null;
  resolved_at: Date | null;
  resolution_note: string | null;
}

const BREAK_COLUMNS = `id, rail, method, kind, direction, reference, currency, rail_amount_minor::text AS rail_amount_minor,
  ledger_amount_minor::text AS ledger_amount_minor, rail_lines, ledger_lines, to_char(day, 'YYYY-MM-DD') AS day, deposit_ids,
  order_ids, status, found_at, resolved_by, resolved_at, resolution_note`;

/**
 * Record the breaks a run found on one rail; returns those not recorded before. A break found again (by a
 * later run over the same period) is the same break, whether it is still open or was resolved.
 */
export async function recordBreaks(rail: string, method: string, found: readonly FoundBreak[]): Promise<BreakRow[]> {
  const fresh: BreakRow[] = [];
  for (const b of found) {
    const rows = await models().query<BreakRow>(
      `INSERT INTO reconciliation_breaks (id, rail, method, kind, direction, reference, currency, rail_amount_minor,
                                          ledger_amount_minor, rail_lines, ledger_lines, day, deposit_ids, order_ids)
       VALUES (:id, :rail, :method, :kind, :direction, :reference, :currency, :railAmount, :ledgerAmount, :railLines,
               :ledgerLines, :day, CAST(:depositIds AS uuid[]), CAST(:orderIds AS uuid[]))
       ON CONFLICT (rail, method, direction, reference, kind) DO NOTHING
       RETURNING ${BREAK_COLUMNS}`,
      {
        replacements: {
          id: uuidv7(),
          rail,
          method,
          kind: b.kind,
          direction: b.direction,
          reference: b.reference.slice(0, 200),
          currency: b.currency,
          railAmount: b.railAmountMinor?.toString() ?? null,
          ledgerAmount: b.ledgerAmountMinor?.toString() ?? null,
          railLines: b.railLines,
          ledgerLines: b.ledgerLines,
          day: b.day,
          depositIds: `{${b.depositIds.join(',')}}`,
          orderIds: `{${b.orderIds.join(',')}}`,
        },
        type: QueryTypes.SELECT,
      },
    );
    fresh.push(...rows);
  }
  return fresh;
}

export interface BreakFilter {
  rail: string | null;
  method: string | null;
  status: 'open' | 'resolved' | null;
  before: string | null;
  take: number;
}

/** Breaks, newest first, keyset-paged on the time-ordered id. */
export async function listBreaks(f: BreakFilter): Promise<BreakRow[]> {
  return models().query<BreakRow>(
    `SELECT ${BREAK_COLUMNS} FROM reconciliation_breaks
      WHERE (CAST(:rail AS text) IS NULL OR rail = :rail)
        AND (CAST(:method AS text) IS NULL OR method = :method)
        AND (CAST(:status AS text) IS NULL OR status = :status)
        AND (CAST(:before AS uuid) IS NULL OR id < CAST(:before AS uuid))
      ORDER BY id DESC LIMIT :take`,
    { replacements: { ...f }, type: QueryTypes.SELECT },
  );
}

export async function findBreak(id: string, tx?: Tx): Promise<BreakRow | undefined> {
  const [row] = await models().query<BreakRow>(`SELECT ${BREAK_COLUMNS} FROM reconciliation_breaks WHERE id = :id`, {
    replacements: { id },
    type: QueryTypes.SELECT,
    transaction: tx,
  });
  return row;
}

/** The break recorded for this (rail, method, direction, reference, kind), if any. */
export async function findBreakByKey(k: { rail: string; method: string; direction: string; reference: string; kind: string }) {
  const [row] = await models().query<BreakRow>(
    `SELECT ${BREAK_COLUMNS} FROM reconciliation_breaks
      WHERE rail = :rail AND method = :method AND direction = :direction AND reference = :reference AND kind = :kind`,
    { replacements: { ...k }, type: QueryTypes.SELECT },
  );
  return row as BreakRow | undefined;
}

/** Resolve an open break with a note, once; undefined when it is not open (any more). */
export async function resolveBreakRow(id: string, by: string, note: string, tx?: Tx): Promise<BreakRow | undefined> {
  const [row] = await models().query<BreakRow>(
    `UPDATE reconciliation_breaks SET status = 'resolved', resolved_by = :by, resolved_at = now(), resolution_note = :note
      WHERE id = :id AND status = 'open'
      RETURNING ${BREAK_COLUMNS}`,
    { replacements: { id, by, note }, type: QueryTypes.SELECT, transaction: tx },
  );
  return row;
}

/** Every break ever found, by rail and kind (they are never deleted, so the count only grows), and those open. */
export async function countBreaks(tx?: Tx): Promise<{ rail: string; kind: string; status: string; n: number }[]> {
  return models().query<{ rail: string; kind: string; status: string; n: number }>(
    `SELECT rail, kind, status, count(*)::int AS n FROM reconciliation_breaks GROUP BY rail, kind, status`,
    { type: QueryTypes.SELECT, transaction: tx },
  );
}

export interface RecordedResultRow {
  reference: string;
  direction: LineDirection;
  currency: string;
  amount_minor: string;
  at: Date;
}

/**
 * M-Pesa's own answers, as Paygate recorded them from Daraja's result callbacks and status queries: each
 * successful B2C payout (out) and STK Push collection (in) resolved in the window, with the amount of the
 * request it answered.
 */
export async function recordedMpesaResults(window: Period): Promise<RecordedResultRow[]> {
  return models().query<RecordedResultRow>(
    `SELECT r.provider_reference AS reference, CASE r.kind WHEN 'b2c' THEN 'out' ELSE 'in' END AS direction,
            coalesce(o.currency, d.currency) AS currency, coalesce(o.amount_minor, d.amount_minor)::text AS amount_minor,
            coalesce(r.resolved_at, r.created_at) AS at
       FROM rail_requests r
       LEFT JOIN orders o ON r.kind = 'b2c' AND o.id = r.order_id
       LEFT JOIN deposits d ON r.kind = 'stk' AND d.id = r.order_id
      WHERE r.rail = 'daraja' AND r.status = 'succeeded'
        AND coalesce(r.resolved_at, r.created_at) >= :from AND coalesce(r.resolved_at, r.created_at) < :to
        AND coalesce(o.amount_minor, d.amount_minor) IS NOT NULL`,
    { replacements: { from: window.from.toISOString(), to: window.to.toISOString() }, type: QueryTypes.SELECT },
  );
}
