import { AppError, notFound, validationError } from '../platform/errors';
import { isUuid } from '../platform/ids';
import { componentLogger } from '../platform/logger';
import { isStaff, type Caller } from '../domain/caller';
import {
  addNote,
  alertsOf,
  assignCase,
  caseDeposits,
  caseOrders,
  confirmClosure,
  fileIntoOpenCase,
  findCase,
  listCases,
  lockCase,
  notesOf,
  requestClosure,
  type CaseAlertRecord,
  type CaseOutcome,
  type CaseRecord,
  type CaseStatus,
  type NoteRecord,
} from '../repositories/cases';
import type { EvaluationRecord } from '../repositories/monitoring';
import { inTransaction, type Tx } from '../repositories/transaction';
import { findUser } from '../repositories/users';
import { recordStaffAction } from './audit';
import { keepStr, kesConversion } from './goaml-service';
import { refuseOwnInterest } from './own-interest';
import { filterOneOf, keysetPage, keysetQuery, type Page } from './paging';

/**
 * Monitoring cases (docs/compliance.md#cases): every alert (an evaluation deciding `review` or `refuse`) joins
 * its customer's open case, or opens one. Compliance staff, with their login, list, assign, note and close
 * cases; closing takes two different staff members, and closing as `reported` files an STR. Nothing here ever
 * reaches the customer (no tipping off): no answer, event or webhook of theirs names a case.
 */

const log = componentLogger('cases');

export const CASE_STATUSES = ['open', 'closed'] as const;
export const CASE_OUTCOMES = ['false_positive', 'reported'] as const;

/**
 * File an evaluation into its customer's open case when it is an alert (`review` or `refuse`), in `tx` when
 * given (the evaluation's own transaction); a `pass` files nothing. The case's id, or null.
 */
export async function fileAlert(tx: Tx | undefined, evaluation: EvaluationRecord): Promise<string | null> {
  if (evaluation.decision === 'pass') return null;
  const { caseId, opened } = await fileIntoOpenCase(evaluation.customerId, evaluation.id, tx);
  log.info({ caseId, evaluationId: evaluation.id, opened }, opened ? 'monitoring case opened' : 'alert joined an open case');
  return caseId;
}

export interface CaseClosureView {
  /** Who requested the closure (first staff member), or confirmed it. */
  requested_by: string;
  requested_at: string;
  outcome: CaseOutcome;
  note: string;
}

export interface CaseView {
  case_id: string;
  /** The customer the alerts are about. */
  customer_id: string;
  status: CaseStatus;
  assignee_id: string | null;
  opened_at: string;
  alert_count: number;
  last_alert_at: string | null;
  /** A closure one staff member requested, waiting for a second one; null when none waits (or once closed, the closure made). */
  closure: CaseClosureView | null;
  /** Who confirmed the closure, when: null while open. */
  closed_by: string | null;
  closed_at: string | null;
  /** The STR a `reported` closure filed (`GET /compliance/goaml/{report_id}.xml`); null otherwise. */
  report_id: string | null;
}

export interface CaseAlertView {
  evaluation_id: string;
  movement_kind: string;
  movement_id: string;
  decision: string;
  /** The version of the rules the evaluation used. */
  rule_set_version: number;
  evaluated_at: string;
  // Each rule's band and the numbers it was decided on, by rule id. Line comments: a described free-form
  // map is published inline, and the OWASP rules ask a bound of it that a $ref does not need.
  rules: Record<string, unknown>;
  // Each typology's score and decision, by typology id.
  typologies: Record<string, unknown>;
}

export interface CaseNoteView {
  note_id: string;
  author_id: string;
  text: string;
  created_at: string;
}

export interface CaseDetailView extends CaseView {
  /** The alerts, oldest first. */
  alerts: CaseAlertView[];
  /** The notes, oldest first. */
  notes: CaseNoteView[];
}

/** A closure's answer: the case, and the STR's id when it was closed as `reported`. */
export type CaseClosedView = CaseView;

const caseView = (c: CaseRecord): CaseView => ({
  case_id: c.id,
  customer_id: c.customerId,
  status: c.status,
  assignee_id: c.assigneeId,
  opened_at: c.openedAt.toISOString(),
  alert_count: c.alertCount,
  last_alert_at: c.lastAlertAt?.toISOString() ?? null,
  closure:
    c.closureRequestedBy && c.closureOutcome && c.closureRequestedAt && c.closureNote !== null
      ? {
          requested_by: c.closureRequestedBy,
          requested_at: c.closureRequestedAt.toISOString(),
          outcome: c.closureOutcome,
          note: c.closureNote,
        }
      : null,
  closed_by: c.closedBy,
  closed_at: c.closedAt?.toISOString() ?? null,
  report_id: c.reportId,
});

const alertView = (a: CaseAlertRecord): CaseAlertView => ({
  evaluation_id: a.evaluationId,
  movement_kind: a.movementKind,
  movement_id: a.movementId,
  decision: a.decision,
  rule_set_version: a.ruleSetVersion,
  evaluated_at: a.evaluatedAt.toISOString(),
  rules: a.ruleResults,
  typologies: a.typologyScores,
});

const noteView = (n: NoteRecord): CaseNoteView => ({
  note_id: n.id,
  author_id: n.authorId,
  text: n.text,
  created_at: n.createdAt.toISOString(),
});

/** Cases are compliance staff's, worked with their own login (docs/compliance.md#cases). */
function assertStaffInPerson(caller: Caller): void {
  if (caller.key) throw new AppError('forbidden', 'cases are worked by staff with their login, never with an API key');
  if (!isStaff(caller)) throw new AppError('forbidden', 'cases are for compliance staff');
}

const caseIdOf = (caseId: string): string => {
  if (!isUuid(caseId)) throw validationError('case_id', 'must be a UUID');
  return caseId;
};

/** The text of a note or a closure: trimmed, 1 to 2000 characters. */
const textOf = (field: string, text: string): string => {
  const trimmed = text.trim();
  if (trimmed.length < 1 || trimmed.length > 2000) throw validationError(field, 'must be 1 to 2000 characters');
  return trimmed;
};

export interface CaseQuery {
  status?: string;
  assignee?: string;
  customer?: string;
  limit?: number;
  cursor?: string;
}

/** Cases, newest first, keyset-paged; filters: status, assignee, customer. */
export async function listMonitoringCases(caller: Caller, q: CaseQuery): Promise<Page<CaseView>> {
  assertStaffInPerson(caller);
  const status = filterOneOf('status', q.status, CASE_STATUSES);
  if (q.assignee !== undefined && !isUuid(q.assignee)) throw validationError('assignee', 'must be a user id (a UUID)');
  if (q.customer !== undefined && !isUuid(q.customer)) throw validationError('customer', 'must be a user id (a UUID)');
  const { limit, before } = keysetQuery(q);
  const rows = await listCases({ status, assigneeId: q.assignee, customerId: q.customer }, before, limit + 1);
  return keysetPage(rows, limit, caseView);
}

/** One case with its alerts (each rule's numbers, the rules' version) and notes. */
export async function getMonitoringCase(caller: Caller, caseId: string): Promise<CaseDetailView> {
  assertStaffInPerson(caller);
  const found = await findCase(caseIdOf(caseId));
  if (!found) throw notFound('case');
  const [alerts, notes] = await Promise.all([alertsOf(found.id), notesOf(found.id)]);
  return { ...caseView(found), alerts: alerts.map(alertView), notes: notes.map(noteView) };
}

/**
 * Run `work` on the case locked, for `caller`: staff in person, and never on a case about themselves (their
 * own account, or someone they share a name, phone, e-mail or ID number with).
 */
async function onLockedCase<T>(caller: Caller, caseId: string, work: (c: CaseRecord, tx: Tx) => Promise<T>): Promise<T> {
  assertStaffInPerson(caller);
  const id = caseIdOf(caseId);
  return inTransaction(async (tx) => {
    const found = await lockCase(id, tx);
    if (!found) throw notFound('case');
    await refuseOwnInterest(caller, 'work this case', [{ role: 'customer', userId: found.customerId }]);
    return work(found, tx);
  });
}

const reread = async (id: string, tx: Tx): Promise<CaseRecord> => {
  const found = await findCase(id, tx);
  if (!found) throw notFound('case');
  return found;
};

/** Give an open case to a staff member (never to the customer it is about). */
export async function assignMonitoringCase(caller: Caller, caseId: string, assigneeId: string): Promise<CaseView> {
  if (!isUuid(assigneeId)) throw validationError('assignee_id', 'must be a user id (a UUID)');
  const assigned = await onLockedCase(caller, caseId, async (c, tx) => {
    if (c.status !== 'open') throw new AppError('conflict', 'the case is closed');
    const assignee = await findUser(assigneeId);
    if (!assignee || !(assignee.roles.includes('compliance') || assignee.roles.includes('admin'))) {
      throw validationError('assignee_id', 'must be a compliance or admin staff member');
    }
    if (assigneeId === c.customerId) throw validationError('assignee_id', 'must not be the customer the case is about');
    if (!(await assignCase(c.id, assigneeId, tx))) throw new AppError('conflict', 'the case is closed');
    await recordStaffAction(tx, {
      by: caller,
      action: 'case.assigned',
      subjectType: 'monitoring_case',
      subjectId: c.id,
      before: { assignee_id: c.assigneeId },
      after: { assignee_id: assigneeId },
    });
    return reread(c.id, tx);
  });
  log.info({ caseId: assigned.id, assigneeId, by: caller.id }, 'case assigned');
  return caseView(assigned);
}

/** Add a note to a case (open or closed: a note after closing records what happened next). */
export async function noteMonitoringCase(caller: Caller, caseId: string, text: string): Promise<CaseNoteView> {
  const clean = textOf('text', text);
  const note = await onLockedCase(caller, caseId, async (c, tx) => {
    const added = await addNote(c.id, caller.id, clean, tx);
    await recordStaffAction(tx, {
      by: caller,
      action: 'case.noted',
      subjectType: 'monitoring_case',
      subjectId: c.id,
      before: null,
      after: { note_id: added.id, text: clean },
    });
    return added;
  });
  return noteView(note);
}

export interface CaseClosure {
  outcome: CaseOutcome;
  note: string;
}

/**
 * Close a case, with four eyes: the first staff member's closure is recorded and waits (`pending: true`, 202);
 * a different staff member confirming the same outcome closes it (200). The same person again is a 403; a
 * different outcome from the waiting one a 409. Closing as `reported` files an STR from the case's alerts
 * and movements, in the same transaction.
 */
export async function closeMonitoringCase(
  caller: Caller,
  caseId: string,
  body: CaseClosure,
): Promise<{ pending: boolean; view: CaseView }> {
  const outcome = filterOneOf('outcome', body.outcome, CASE_OUTCOMES);
  if (!outcome) throw validationError('outcome', `must be one of ${CASE_OUTCOMES.join(', ')}`);
  const note = textOf('note', body.note);
  const result = await onLockedCase(caller, caseId, async (c, tx) => {
    if (c.status !== 'open') throw new AppError('conflict', 'the case is already closed');
    if (!c.closureRequestedBy) {
      if (!(await requestClosure(c.id, caller.id, outcome, note, tx))) throw new AppError('conflict', 'the case changed meanwhile');
      await recordStaffAction(tx, {
        by: caller,
        action: 'case.closure_requested',
        subjectType: 'monitoring_case',
        subjectId: c.id,
        before: { status: c.status },
        after: { status: c.status, outcome, note },
      });
      return { pending: true, closed: await reread(c.id, tx) };
    }
    if (c.closureRequestedBy === caller.id) {
      throw new AppError('forbidden', 'a case is closed by a second staff member, never by the one who asked to close it');
    }
    if (c.closureOutcome !== outcome) {
      throw new AppError('conflict', `the closure waiting is ${c.closureOutcome ?? 'none'}: confirm that outcome, or note why not`);
    }
    const reportId = outcome === 'reported' ? await strOf(caller, c, note, tx) : null;
    if (!(await confirmClosure(c.id, caller.id, reportId, tx))) throw new AppError('conflict', 'the case changed meanwhile');
    await addNote(c.id, caller.id, note, tx);
    await recordStaffAction(tx, {
      by: caller,
      action: 'case.closed',
      subjectType: 'monitoring_case',
      subjectId: c.id,
      before: { status: c.status, requested_by: c.closureRequestedBy },
      after: { status: 'closed', outcome, note, report_id: reportId },
    });
    return { pending: false, closed: await reread(c.id, tx) };
  });
  log.info(
    { caseId: result.closed.id, pending: result.pending, outcome, by: caller.id },
    result.pending ? 'case closure requested' : 'case closed',
  );
  return { pending: result.pending, view: caseView(result.closed) };
}

/** The STR of a case closed as `reported`: its alerts' reasons in numbers, its payouts and deposits. */
async function strOf(caller: Caller, c: CaseRecord, confirmNote: string, tx: Tx): Promise<string> {
  // One after another: the reads share the closure's transaction, and so its connection.
  const alerts = await alertsOf(c.id, tx);
  const orders = await caseOrders(c.id, tx);
  const deposits = await caseDeposits(c.id, kesConversion(), tx);
  const fired = new Set<string>();
  for (const a of alerts) {
    for (const [typology, score] of Object.entries(a.typologyScores)) {
      const decision = (score as { decision?: unknown }).decision;
      if (decision === 'review' || decision === 'refuse') fired.add(typology);
    }
  }
  const reason = [
    `Transaction monitoring case ${c.id}: ${alerts.length} alert(s)`,
    fired.size > 0 ? `typologies: ${[...fired].sort().join(', ')}` : null,
    c.closureNote,
    confirmNote === c.closureNote ? null : confirmNote,
  ]
    .filter((part): part is string => part !== null && part !== '')
    .join('. ');
  const held = alerts.some((a) => a.decision === 'refuse') ? 'Movements refused or held for review' : 'Movements held for review';
  return keepStr(caller, { caseId: c.id, reason, action: held, orders, deposits }, tx);
}
