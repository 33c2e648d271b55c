import { Op, QueryTypes, type WhereOptions } from 'sequelize';
import { models, MonitoringCase, MonitoringCaseNote } from '../models';
import { uuidv7 } from '../platform/ids';
import { ctrDepositRow, ctrOrderRow, type CtrDepositRow, type CtrOrderRow, type RawCtrDeposit, type RawCtrOrder } from './goaml-reports';
import type { Tx } from './transaction';

/**
 * Monitoring cases (`monitoring_cases`, `monitoring_case_alerts`, `monitoring_case_notes`;
 * docs/compliance.md#cases): every read and write of the three tables. One open case per customer is the
 * database's rule (`monitoring_cases_one_open`); a closure is requested, then confirmed by someone else, each
 * step a conditional update.
 */

export type CaseStatus = 'open' | 'closed';
export type CaseOutcome = 'false_positive' | 'reported';

export interface CaseRecord {
  id: string;
  customerId: string;
  status: CaseStatus;
  assigneeId: string | null;
  openedAt: Date;
  closureRequestedBy: string | null;
  closureRequestedAt: Date | null;
  closureOutcome: CaseOutcome | null;
  closureNote: string | null;
  closedBy: string | null;
  closedAt: Date | null;
  reportId: string | null;
  alertCount: number;
  lastAlertAt: Date | null;
}

interface CaseRow {
  id: string;
  customer_id: string;
  status: CaseStatus;
  assignee_id: string | null;
  opened_at: Date;
  closure_requested_by: string | null;
  closure_requested_at: Date | null;
  closure_outcome: CaseOutcome | null;
  closure_note: string | null;
  closed_by: string | null;
  closed_at: Date | null;
  report_id: string | null;
  alert_count: number;
  last_alert_at: Date | null;
}

const caseRecord = (r: CaseRow): CaseRecord => ({
  id: r.id,
  customerId: r.customer_id,
  status: r.status,
  assigneeId: r.assignee_id,
  openedAt: new Date(r.opened_at),
  closureRequestedBy: r.closure_requested_by,
  closureRequestedAt: r.closure_requested_at ? new Date(r.closure_requested_at) : null,
  closureOutcome: r.closure_outcome,
  closureNote: r.closure_note,
  closedBy: r.closed_by,
  closedAt: r.closed_at ? new Date(r.closed_at) : null,
  reportId: r.report_id,
  alertCount: r.alert_count,
  lastAlertAt: r.last_alert_at ? new Date(r.last_alert_at) : null,
});

const CASE_SELECT = `SELECT c.*,
   (SELECT count(*)::int FROM monitoring_case_alerts a WHERE a.case_id = c.id) AS alert_count,
   (SELECT max(a.filed_at) FROM monitoring_case_alerts a WHERE a.case_id = c.id) AS last_alert_at
  FROM monitoring_cases c`;

/**
 * File an alert (an evaluation) into the customer's open case, opening one when there is none: the partial
 * unique index makes two alerts filed at once join one case. The open case is locked (`FOR UPDATE`), so a closure
 * confirmed meanwhile waits for the alert, or the alert opens a new case after it. The case's id.
 */
export async function fileIntoOpenCase(customerId: string, evaluationId: string, tx?: Tx): Promise<{ caseId: string; opened: boolean }> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const inserted = await models().query<{ id: string }>(
      `INSERT INTO monitoring_cases (id, customer_id) VALUES (:id, :customerId)
       ON CONFLICT (customer_id) WHERE status = 'open' DO NOTHING RETURNING id`,
      { replacements: { id: uuidv7(), customerId }, type: QueryTypes.SELECT, transaction: tx },
    );
    let caseId = inserted[0]?.id;
    const opened = caseId !== undefined;
    if (!caseId) {
      const [open] = await models().query<{ id: string }>(
        `SELECT id FROM monitoring_cases WHERE customer_id = :customerId AND status = 'open' FOR UPDATE`,
        { replacements: { customerId }, type: QueryTypes.SELECT, transaction: tx },
      );
      caseId = open?.id;
    }
    if (caseId) {
      await models().query(
        `INSERT INTO monitoring_case_alerts (evaluation_id, case_id) VALUES (:evaluationId, :caseId) ON CONFLICT (evaluation_id) DO NOTHING`,
        { replacements: { evaluationId, caseId }, transaction: tx },
      );
      // A new alert withdraws a pending closure: the closure is decided on every alert of the case.
      await MonitoringCase.update(
        { closureRequestedBy: null, closureRequestedAt: null, closureOutcome: null, closureNote: null },
        { where: { id: caseId, status: 'open', closureRequestedBy: { [Op.ne]: null } }, transaction: tx },
      );
      return { caseId, opened };
    }
  }
  throw new Error(`no open case could be found or opened for customer ${customerId}`);
}

export async function findCase(id: string, tx?: Tx): Promise<CaseRecord | undefined> {
  const [row] = await models().query<CaseRow>(`${CASE_SELECT} WHERE c.id = :id`, {
    replacements: { id },
    type: QueryTypes.SELECT,
    transaction: tx,
  });
  return row ? caseRecord(row) : undefined;
}

/** The case, locked for a change: a second change waits, then sees the first. */
export async function lockCase(id: string, tx: Tx): Promise<CaseRecord | undefined> {
  await models().query('SELECT id FROM monitoring_cases WHERE id = :id FOR UPDATE', { replacements: { id }, transaction: tx });
  return findCase(id, tx);
}

export interface CaseFilter {
  status?: CaseStatus;
  assigneeId?: string;
  customerId?: string;
}

/** Cases, newest first, keyset-paged on the time-ordered id. */
export async function listCases(filter: CaseFilter, before: string | null, take: number): Promise<CaseRecord[]> {
  const where: string[] = [];
  if (filter.status) where.push('c.status = :status');
  if (filter.assigneeId) where.push('c.assignee_id = :assigneeId');
  if (filter.customerId) where.push('c.customer_id = :customerId');
  if (before) where.push('c.id < :before');
  const rows = await models().query<CaseRow>(
    `${CASE_SELECT} ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY c.id DESC LIMIT :take`,
    { replacements: { ...filter, before, take }, type: QueryTypes.SELECT },
  );
  return rows.map(caseRecord);
}

/** Give an open case to a staff member; false when it is not open. */
export async function assignCase(id: string, assigneeId: string, tx: Tx): Promise<boolean> {
  const [count] = await MonitoringCase.update({ assigneeId }, { where: { id, status: 'open' }, transaction: tx });
  return count === 1;
}

/** Record the first staff member's closure; false when the case is not open or a closure already waits. */
export async function requestClosure(id: string, by: string, outcome: CaseOutcome, note: string, tx: Tx): Promise<boolean> {
  const [count] = await MonitoringCase.update(
    { closureRequestedBy: by, closureRequestedAt: new Date(), closureOutcome: outcome, closureNote: note },
    { where: { id, status: 'open', closureRequestedBy: null }, transaction: tx },
  );
  return count === 1;
}

/** Confirm a pending closure by someone other than who requested it; false when it changed meanwhile. */
export async function confirmClosure(id: string, by: string, reportId: string | null, tx: Tx): Promise<boolean> {
  const where: WhereOptions<MonitoringCase> = { id, status: 'open', closureRequestedBy: { [Op.ne]: by, [Op.not]: null } };
  const [count] = await MonitoringCase.update(
    { status: 'closed', closedBy: by, closedAt: new Date(), reportId },
    { where, transaction: tx },
  );
  return count === 1;
}

export interface NoteRecord {
  id: string;
  authorId: string;
  text: string;
  createdAt: Date;
}

export async function addNote(caseId: string, authorId: string, text: string, tx: Tx): Promise<NoteRecord> {
  const row = await MonitoringCaseNote.create({ id: uuidv7(), caseId, authorId, text }, { transaction: tx });
  return { id: row.id, authorId: row.authorId, text: row.text, createdAt: row.createdAt };
}

export async function notesOf(caseId: string, tx?: Tx): Promise<NoteRecord[]> {
  const rows = await MonitoringCaseNote.findAll({ where: { caseId }, order: [['id', 'ASC']], transaction: tx });
  return rows.map((r) => ({ id: r.id, authorId: r.authorId, text: r.text, createdAt: r.createdAt }));
}

export interface CaseAlertRecord {
  evaluationId: string;
  movementKind: string;
  movementId: string;
  decision: string;
  ruleSetVersion: number;
  ruleResults: Record<string, unknown>;
  typologyScores: Record<string, unknown>;
  evaluatedAt: Date;
}

/** The case's alerts, oldest first, with each rule's numbers and the rule-set version each used. */
export async function alertsOf(caseId: string, tx?: Tx): Promise<CaseAlertRecord[]> {
  const rows = await models().query<{
    id: string;
    movement_kind: string;
    movement_id: string;
    decision: string;
    rule_set_version: number;
    rule_results: Record<string, unknown>;
    typology_scores: Record<string, unknown>;
    created_at: Date;
  }>(
    `SELECT e.id, e.movement_kind, e.movement_id, e.decision, e.rule_set_version, e.rule_results, e.typology_scores, e.created_at
       FROM monitoring_case_alerts a JOIN monitoring_evaluations e ON e.id = a.evaluation_id
      WHERE a.case_id = :caseId ORDER BY e.id`,
    { replacements: { caseId }, type: QueryTypes.SELECT, transaction: tx },
  );
  return rows.map((r) => ({
    evaluationId: r.id,
    movementKind: r.movement_kind,
    movementId: r.movement_id,
    decision: r.decision,
    ruleSetVersion: r.rule_set_version,
    ruleResults: r.rule_results,
    typologyScores: r.typology_scores,
    evaluatedAt: new Date(r.created_at),
  }));
}

/**
 * The payouts the case's alerts were about (for its STR), oldest first: a bulk payout's alert brings the orders
 * its items were paid by (none when it was refused before any was sent).
 */
export async function caseOrders(caseId: string, tx?: Tx): Promise<CtrOrderRow[]> {
  const rows = await models().query<RawCtrOrder>(
    `SELECT DISTINCT o.id, o.created_at, o.method, o.currency, o.amount_minor, o.kes_equivalent_minor, o.destination, o.route,
            o.rail_reference, u.id AS user_id, u.full_name, u.email, u.phone
       FROM monitoring_case_alerts a
       JOIN monitoring_evaluations e ON e.id = a.evaluation_id AND e.movement_kind IN ('payout', 'payout_batch')
       JOIN orders o ON o.user_id = e.customer_id
        AND CASE e.movement_kind WHEN 'payout' THEN o.id::text = e.movement_id ELSE o.payout_batch_id::text = e.movement_id END
       JOIN users u ON u.id = o.user_id
      WHERE a.case_id = :caseId
      ORDER BY o.created_at, o.id`,
    { replacements: { caseId }, type: QueryTypes.SELECT, transaction: tx },
  );
  return rows.map(ctrOrderRow);
}

/**
 * The deposits the case's alerts were about (for its STR), oldest first, with their KES equivalent at the
 * reference rates (`{ rate, den }` per currency, rounded up as the CTR does); a currency without a rate is left out.
 */
export async function caseDeposits(
  caseId: string,
  kesConversion: Record<string, { rate: string; den: string }>,
  tx?: Tx,
): Promise<CtrDepositRow[]> {
  const rows = await models().query<RawCtrDeposit>(
    `SELECT DISTINCT d.id, d.created_at, d.channel, d.currency, d.amount_minor,
            div(d.amount_minor * (r.value ->> 'rate')::numeric * 100 + (r.value ->> 'den')::numeric - 1, (r.value ->> 'den')::numeric) AS kes_minor,
            d.provider_reference, d.payer_phone, d.payer_name, d.payer_address, u.id AS user_id, u.full_name, u.email, u.phone
       FROM monitoring_case_alerts a
       JOIN monitoring_evaluations e ON e.id = a.evaluation_id AND e.movement_kind = 'deposit'
       JOIN deposits d ON d.id::text = e.movement_id AND d.user_id = e.customer_id
       JOIN jsonb_each(CAST(:conversion AS jsonb)) r ON r.key = d.currency
       JOIN users u ON u.id = d.user_id
      WHERE a.case_id = :caseId
      ORDER BY d.created_at, d.id`,
    { replacements: { caseId, conversion: JSON.stringify(kesConversion) }, type: QueryTypes.SELECT, transaction: tx },
  );
  return rows.map(ctrDepositRow);
}
