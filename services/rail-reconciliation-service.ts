import { config } from '../platform/config';
import { AppError, notFound, validationError } from '../platform/errors';
import { isUuid } from '../platform/ids';
import { componentLogger } from '../platform/logger';
import { CURRENCY_SCALE, exactMinor, formatAmount, isCurrency } from '../domain/money';
import { isBankCharge } from '../domain/bank-statement';
import { isStaff, type Caller } from '../domain/caller';
import type { RailMethod } from '../connectors/types';
import {
  ledgerWindow,
  matchLines,
  previousDay,
  type LedgerRailLine,
  type LineDirection,
  type Period,
  type RailLine,
} from '../domain/reconciliation-lines';
import {
  findBreak,
  findBreakByKey,
  ledgerRailLines,
  listBreaks,
  recordBreaks,
  recordedMpesaResults,
  resolveBreakRow,
  type BreakRow,
} from '../repositories/reconciliation';
import type { ApprovalRecord } from '../repositories/approvals';
import { sandboxLines } from '../repositories/sandbox-transfers';
import { inTransaction, type Tx } from '../repositories/transaction';
import { recordStaffAction } from './audit';
import { needsFourEyes, requestApproval, type ApprovalRequestView } from './approvals';
import { railConnectors } from './connectors';
import { parseInstant } from './instants';
import { postRailCharge } from './rail-charges';
import { filterOneOf, keysetPage, keysetQuery, type Page } from './paging';

/**
 * Reconciliation line by line (docs/wallets.md#reconciliation-line-by-line): for each rail and a period,
 * the provider's own record (the sandbox's books, the Jenga statement, M-Pesa's results, the exchange's
 * deposits and withdrawals) is matched line by line with the ledger's movements of that rail, by provider
 * reference, amount and day. Every difference is a break, recorded once, an event for staff and a metric.
 */

const log = componentLogger('rail-reconciliation');

export const BREAK_STATUSES = ['open', 'resolved'] as const;
const METHODS: readonly RailMethod[] = ['bank_transfer', 'mobile_money', 'crypto'];

export interface BreakView {
  break_id: string;
  /** The connector whose record was read: `sandbox`, `jenga`, `daraja` or `ccxt`. */
  rail: string;
  /** The payment method whose rail account (`rail:<method>`) was matched. */
  method: string;
  /** `missing_in_ledger`, `missing_at_rail`, `amount_mismatch` or `duplicate`. */
  kind: string;
  /** `in`: money into the rail (a deposit); `out`: money out of it (a payout). */
  direction: LineDirection;
  /** The provider's reference the lines share (a transaction id, a statement reference, a txid). */
  reference: string;
  currency: string;
  /** What the rail's lines add up to; null when the rail has none. */
  rail_amount: string | null;
  /** What the ledger's lines add up to; null when the ledger has none. */
  ledger_amount: string | null;
  rail_lines: number;
  ledger_lines: number;
  /** The day (UTC) of the earliest line. */
  day: string;
  deposit_ids: string[];
  order_ids: string[];
  status: 'open' | 'resolved';
  found_at: string;
  resolved_by: string | null;
  resolved_at: string | null;
  resolution_note: string | null;
}

const amountOf = (minor: string | null, currency: string): string | null =>
  minor === null ? null : isCurrency(currency) ? formatAmount(minor, currency) : minor;

export const breakView = (b: BreakRow): BreakView => ({
  break_id: b.id,
  rail: b.rail,
  method: b.method,
  kind: b.kind,
  direction: b.direction,
  reference: b.reference,
  currency: b.currency,
  rail_amount: amountOf(b.rail_amount_minor, b.currency),
  ledger_amount: amountOf(b.ledger_amount_minor, b.currency),
  rail_lines: b.rail_lines,
  ledger_lines: b.ledger_lines,
  day: b.day,
  deposit_ids: b.deposit_ids,
  order_ids: b.order_ids,
  status: b.status,
  found_at: new Date(b.found_at).toISOString(),
  resolved_by: b.resolved_by,
  resolved_at: b.resolved_at ? new Date(b.resolved_at).toISOString() : null,
  resolution_note: b.resolution_note,
});

/** What one rail's run read and found. */
export interface RailRunView {
  rail: string;
  method: string;
  /** Lines of the rail's own record in the period (null when it could not be read). */
  rail_lines: number | null;
  ledger_lines: number;
  /** Breaks this run found, new or found before. */
  breaks: number;
  /** Breaks no run had found before. */
  new_breaks: number;
  /** Why the rail's record could not be read, or what it leaves out. */
  note?: string;
}

export interface ReconciliationRunView {
  from: string;
  to: string;
  rails: RailRunView[];
  /** Every break this run found (new or found before), in day order. */
  breaks: BreakView[];
}

const minorOf = (amount: string | null, currency: string): bigint | null =>
  amount !== null && isCurrency(currency) ? exactMinor(amount, CURRENCY_SCALE[currency]) : null;

/** Shillings as a bank statement writes them ("2,500.00", "-2500.5") in cents; null when it is not an amount. */
function statementCents(amount: string): bigint | null {
  const match = /^-?(\d{1,15})(?:\.(\d{1,2}))?$/.exec(amount.replace(/,/g, '').trim());
  if (!match) return null;
  return BigInt(match[1]) * 100n + BigInt((match[2] ?? '').padEnd(2, '0'));
}

type Record = { lines: RailLine[]; note?: string } | { unavailable: string };

/** The rail's own record of a window, as lines; `unavailable` when it could not be read. */
async function providerRecord(method: RailMethod, rail: string, window: Period): Promise<Record> {
  const lines: RailLine[] = [];
  let unreadable = 0;
  const push = (reference: string | null, direction: LineDirection, currency: string, amountMinor: bigint | null, at: Date) => {
    if (!reference || amountMinor === null || Number.isNaN(at.getTime())) unreadable += 1;
    else lines.push({ reference, direction, currency, amountMinor, at });
  };
  try {
    if (rail === 'sandbox') {
      for (const l of await sandboxLines(method, window.from, window.to))
        push(l.reference, l.direction, l.currency, minorOf(l.amount, l.currency), new Date(l.at));
    } else if (rail === 'jenga') {
      const statement = railConnectors().bankStatement;
      if (!statement) return { unavailable: 'the primary bank keeps no statement here' };
      for (const l of await statement.miniStatement()) {
        const cents = statementCents(l.amount);
        const at = new Date(l.date);
        // The bank's own charges are the operator's expense: posted once, then matched like any other line.
        if (isBankCharge(l) && l.reference && cents !== null && cents !== 0n && !Number.isNaN(at.getTime())) {
          const amountMinor = cents < 0n ? -cents : cents;
          await postRailCharge({
            rail,
            method,
            providerReference: l.reference,
            currency: 'KES',
            amountMinor,
            description: l.description,
            chargedAt: at,
          });
        }
        push(l.reference, l.type === 'Credit' ? 'in' : 'out', 'KES', cents === null || cents >= 0n ? cents : -cents, at);
      }
    } else if (rail === 'daraja') {
      for (const r of await recordedMpesaResults(window))
        push(r.reference, r.direction, r.currency, BigInt(r.amount_minor), new Date(r.at));
    } else if (rail === 'ccxt') {
      const c = railConnectors();
      const since = window.from.getTime();
      for (const d of (await c.receivedDeposits?.deposits(since)) ?? []) {
        if (d.status === 'ok') push(d.txid, 'in', d.currency, minorOf(d.amount, d.currency), new Date(d.at ?? window.from.getTime()));
      }
      for (const w of (await c.sentWithdrawals?.withdrawals(since)) ?? []) {
        if (w.status === 'ok') push(w.id, 'out', w.currency, minorOf(w.amount, w.currency), new Date(w.at ?? window.from.getTime()));
      }
    } else {
      return { unavailable: `no record of rail ${rail} is read` };
    }
  } catch (err) {
    log.warn({ err, rail, method }, "the rail's own record could not be read");
    // The provider's own words stay in the log (docs/conventions.md#errors).
    return { unavailable: "the rail's record could not be read; the log has the rail's answer" };
  }
  return unreadable > 0 ? { lines, note: `${unreadable} line(s) without a reference, an amount or a date were left out` } : { lines };
}

/** Reconcile one rail over a period: match, record the breaks, and say what was read and found. */
async function reconcileRail(method: RailMethod, rail: string, period: Period): Promise<{ run: RailRunView; found: BreakRow[] }> {
  const window = ledgerWindow(period);
  const record = await providerRecord(method, rail, window);
  const ledger: LedgerRailLine[] = (await ledgerRailLines(method, rail, window)).flatMap((l) =>
    l.reference === null
      ? []
      : [
          {
            reference: l.reference,
            direction: l.direction,
            currency: l.currency,
            amountMinor: BigInt(l.amount_minor),
            at: new Date(l.at),
            depositId: l.deposit_id,
            orderId: l.order_id,
          },
        ],
  );
  if ('unavailable' in record) {
    return {
      run: { rail, method, rail_lines: null, ledger_lines: ledger.length, breaks: 0, new_breaks: 0, note: record.unavailable },
      found: [],
    };
  }
  const breaks = matchLines(period, record.lines, ledger);
  const fresh = await recordBreaks(rail, method, breaks);
  const freshKeys = new Set(fresh.map((b) => `${b.kind}|${b.direction}|${b.reference}`));
  const all = await Promise.all(
    breaks.map(async (b) => {
      const key = `${b.kind}|${b.direction}|${b.reference}`;
      const known = fresh.find((f) => `${f.kind}|${f.direction}|${f.reference}` === key);
      return known ?? (await findBreakByKey({ rail, method, direction: b.direction, reference: b.reference.slice(0, 200), kind: b.kind }));
    }),
  );
  if (fresh.length > 0) log.warn({ rail, method, newBreaks: fresh.length }, 'reconciliation found new breaks');
  return {
    run: {
      rail,
      method,
      rail_lines: record.lines.filter((l) => l.at >= period.from && l.at < period.to).length,
      ledger_lines: ledger.filter((l) => l.at >= period.from && l.at < period.to).length,
      breaks: breaks.length,
      new_breaks: freshKeys.size,
      ...(record.note ? { note: record.note } : {}),
    },
    found: all.filter((b): b is BreakRow => b !== undefined),
  };
}

/**
 * The `reconcile-rails` job, and its on-demand run: every method's configured rail over the period (by
 * default the previous UTC day).
 */
export async function reconcileRails(period: Period = previousDay(new Date())): Promise<ReconciliationRunView> {
  const rails = config().rails;
  const runs: RailRunView[] = [];
  const found: BreakRow[] = [];
  for (const method of METHODS) {
    const { run, found: f } = await reconcileRail(method, rails[method], period);
    runs.push(run);
    found.push(...f);
  }
  return { from: period.from.toISOString(), to: period.to.toISOString(), rails: runs, breaks: found.map(breakView) };
}

const MAX_PERIOD_MS = 31 * 24 * 3600 * 1000;

/** A staff member's on-demand run over `from`..`to` (RFC 3339; by default the last 24 hours). */
export async function reconcileOnDemand(q: { from?: string; to?: string }): Promise<ReconciliationRunView> {
  const to = q.to === undefined ? new Date() : parseInstant(q.to, 'to');
  const from = q.from === undefined ? new Date(to.getTime() - 24 * 3600 * 1000) : parseInstant(q.from, 'from');
  if (from.getTime() >= to.getTime()) throw validationError('from', 'must be before `to`');
  if (to.getTime() - from.getTime() > MAX_PERIOD_MS) throw validationError('from', 'a run covers at most 31 days');
  return reconcileRails({ from, to });
}

/** Breaks, newest first (staff); filtered by rail (connector), method and status. */
export async function listReconciliationBreaks(q: {
  rail?: string;
  method?: string;
  status?: string;
  limit?: number;
  cursor?: string;
}): Promise<Page<BreakView>> {
  const status = filterOneOf('status', q.status, BREAK_STATUSES);
  const method = filterOneOf('method', q.method, METHODS);
  if (q.rail !== undefined && !/^[a-z][a-z0-9_]{0,30}$/.test(q.rail)) throw validationError('rail', 'must be a rail name, e.g. jenga');
  const { limit, before } = keysetQuery(q);
  const rows = await listBreaks({ rail: q.rail ?? null, method: method ?? null, status: status ?? null, before, take: limit + 1 });
  return keysetPage(rows, limit, breakView);
}

/** Kind of the four-eyes request that resolves a break above `FOUR_EYES_ABOVE_KES`. */
export const RESOLVE_RECONCILIATION_BREAK = 'resolve_reconciliation_break';

/** The money a break is about: the larger of the rail's and the ledger's figures. */
function breakAmount(b: BreakRow): bigint {
  const r = BigInt(b.rail_amount_minor ?? '0');
  const l = BigInt(b.ledger_amount_minor ?? '0');
  const size = r > l ? r : l;
  return size > 0n ? size : 1n;
}

const cleanNote = (note: string | undefined): string => {
  const trimmed = note?.trim() ?? '';
  if (trimmed === '') throw validationError('note', 'say what was found and done');
  if (trimmed.length > 1000) throw validationError('note', 'must be at most 1000 characters');
  return trimmed;
};

/**
 * Resolve an open break with a note (staff). Above `FOUR_EYES_ABOVE_KES` nothing changes yet: a four-eyes
 * request waits for a second staff member, and the break is resolved when that one approves.
 */
export async function resolveBreak(
  caller: Caller,
  breakId: string,
  body: { note?: string },
): Promise<{ resolved: BreakView } | { pending: ApprovalRequestView }> {
  if (!isStaff(caller)) throw new AppError('forbidden', 'only compliance or admin staff resolve breaks');
  if (!isUuid(breakId)) throw validationError('break_id', 'must be a UUID');
  const note = cleanNote(body.note);
  const found = await findBreak(breakId);
  if (!found) throw notFound(`break ${breakId}`);
  if (found.status !== 'open') throw new AppError('conflict', `break ${breakId} is already resolved`);
  const amount = breakAmount(found);
  if (isCurrency(found.currency) && needsFourEyes(amount, found.currency)) {
    const pending = await requestApproval(caller, {
      kind: RESOLVE_RECONCILIATION_BREAK,
      subjectId: breakId,
      currency: found.currency,
      amountMinor: amount,
      payload: { note },
    });
    log.info({ breakId, requestedBy: caller.id, requestId: pending.request_id }, 'break resolution waits for a second staff member');
    return { pending };
  }
  const resolved = await inTransaction(async (tx) => {
    const row = await resolveBreakRow(breakId, caller.id, note, tx);
    if (row) {
      await recordStaffAction(tx, {
        by: caller,
        action: 'break.resolved',
        subjectType: 'reconciliation_break',
        subjectId: breakId,
        before: { status: found.status },
        after: { status: row.status, resolution_note: note },
      });
    }
    return row;
  });
  if (!resolved) throw new AppError('conflict', `break ${breakId} was resolved meanwhile`);
  log.info({ breakId, resolvedBy: caller.id }, 'reconciliation break resolved');
  return { resolved: breakView(resolved) };
}

/** The approved four-eyes resolution of a break, in the approval's transaction. */
export async function performApprovedBreakResolution(
  request: ApprovalRecord,
  approver: Caller,
  tx: Tx,
): Promise<{ [key: string]: unknown }> {
  const note = typeof request.payload.note === 'string' ? request.payload.note : '';
  const resolved = await resolveBreakRow(request.subjectId, request.requestedBy, `${note} (approved by ${approver.id})`.slice(0, 1000), tx);
  if (!resolved) throw new AppError('conflict', `break ${request.subjectId} is not open any more`);
  log.info(
    { breakId: resolved.id, requestedBy: request.requestedBy, approvedBy: approver.id },
    'reconciliation break resolved on approval',
  );
  return { break: breakView(resolved) };
}
