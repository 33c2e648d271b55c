import { Op } from 'sequelize';
import { ApprovalRequest } from '../models';
import { isDuplicate, type Tx } from './transaction';

/** Four-eyes approval requests (`approval_requests`): every read and write of them. */

export type ApprovalStatus = 'pending' | 'approved' | 'rejected';

export interface ApprovalRecord {
  id: string;
  kind: string;
  subjectId: string;
  currency: string;
  amountMinor: string;
  kesEquivalentMinor: string;
  payload: Record<string, unknown>;
  status: ApprovalStatus;
  requestedBy: string;
  requestedAt: Date;
  decidedBy: string | null;
  decidedAt: Date | null;
  decisionNote: string | null;
  result: Record<string, unknown> | null;
}

const record = (r: ApprovalRequest): ApprovalRecord => ({
  id: r.id,
  kind: r.kind,
  subjectId: r.subjectId,
  currency: r.currency,
  amountMinor: String(r.amountMinor),
  kesEquivalentMinor: String(r.kesEquivalentMinor),
  payload: r.payload,
  status: r.status,
  requestedBy: r.requestedBy,
  requestedAt: r.requestedAt,
  decidedBy: r.decidedBy ?? null,
  decidedAt: r.decidedAt ?? null,
  decisionNote: r.decisionNote ?? null,
  result: r.result ?? null,
});

/**
 * Record a pending request; undefined when the subject already has a pending request of that kind (the
 * database keeps one, so two staff asking at once make one request).
 */
export async function createApprovalRequest(
  request: Pick<
    ApprovalRecord,
    'id' | 'kind' | 'subjectId' | 'currency' | 'amountMinor' | 'kesEquivalentMinor' | 'payload' | 'requestedBy'
  >,
  tx?: Tx,
): Promise<ApprovalRecord | undefined> {
  try {
    return record(await ApprovalRequest.create(request, { transaction: tx }));
  } catch (err) {
    if (isDuplicate(err)) return undefined;
    throw err;
  }
}

export async function findApprovalRequest(id: string, tx?: Tx): Promise<ApprovalRecord | undefined> {
  const found = await ApprovalRequest.findByPk(id, { transaction: tx });
  return found ? record(found) : undefined;
}

/** The request, locked for its decision: a second decision waits, then sees it decided. */
export async function lockApprovalRequest(id: string, tx: Tx): Promise<ApprovalRecord | undefined> {
  const found = await ApprovalRequest.findByPk(id, { transaction: tx, lock: tx.LOCK.UPDATE });
  return found ? record(found) : undefined;
}

/** The pending request of a kind on one subject, if there is one. */
export async function pendingApprovalFor(kind: string, subjectId: string, tx?: Tx): Promise<ApprovalRecord | undefined> {
  const found = await ApprovalRequest.findOne({ where: { kind, subjectId, status: 'pending' }, transaction: tx });
  return found ? record(found) : undefined;
}

/** The newest request of a kind on one subject, whatever its status. */
export async function latestApprovalFor(kind: string, subjectId: string): Promise<ApprovalRecord | undefined> {
  const found = await ApprovalRequest.findOne({ where: { kind, subjectId }, order: [['id', 'DESC']] });
  return found ? record(found) : undefined;
}

/** Requests in one status (any when null), newest first, keyset-paged on the time-ordered id. */
export async function listApprovalRequests(status: ApprovalStatus | null, before: string | null, take: number): Promise<ApprovalRecord[]> {
  const rows = await ApprovalRequest.findAll({
    where: { ...(status ? { status } : {}), ...(before ? { id: { [Op.lt]: before } } : {}) },
    order: [['id', 'DESC']],
    limit: take,
  });
  return rows.map(record);
}

/** Decide a pending request, once; undefined when it was no longer pending. */
export async function decideApprovalRequest(
  id: string,
  decision: { status: Exclude<ApprovalStatus, 'pending'>; decidedBy: string; note: string | null; result: Record<string, unknown> | null },
  tx: Tx,
): Promise<ApprovalRecord | undefined> {
  const [count, rows] = await ApprovalRequest.update(
    { status: decision.status, decidedBy: decision.decidedBy, decidedAt: new Date(), decisionNote: decision.note, result: decision.result },
    { where: { id, status: 'pending' }, returning: true, transaction: tx },
  );
  return count === 1 ? record(rows[0]) : undefined;
}
