import { QueryTypes, type Transaction } from 'sequelize';
import { models } from '../models';
import type { AppealReason, AppealResolution, AppealStatus, FirstApproval } from '../domain/appeals/contract';

/** Appeals against orders: every read and write of `appeals`. */

/** How many appeals there are per status (metrics). */
export async function countAppealsByStatus(tx?: Transaction): Promise<{ status: string; n: number }[]> {
  return models().query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM appeals GROUP BY status', {
    type: QueryTypes.SELECT,
    transaction: tx,
  });
}

/** An appeal with its order's parties (the owner, and for a P2P trade the ad's owner). */
export interface AppealRow {
  id: string;
  order_id: string;
  reason: AppealReason;
  description: string;
  evidence: { url: string; sha256?: string }[];
  status: AppealStatus;
  created_by: string;
  created_at: Date;
  sla_deadline: Date;
  decided_by: string | null;
  decided_at: Date | null;
  decision_note: string | null;
  resolution: AppealResolution | null;
  workflow_id: string;
  first_approved_by: string | null;
  first_approved_at: Date | null;
  first_approval_note: string | null;
  first_approval: FirstApproval | null;
  order_owner: string;
  counterparty: string | null;
}

const APPEAL_WITH_PARTIES = `SELECT a.*, o.user_id AS order_owner, t.maker_id AS counterparty
       FROM appeals a JOIN orders o ON o.id = a.order_id LEFT JOIN p2p_trades t ON t.order_id = a.order_id`;

/** The appeal with its order's parties, or undefined. */
export async function findAppeal(appealId: string): Promise<AppealRow | undefined> {
  const [row] = await models().query<AppealRow>(`${APPEAL_WITH_PARTIES} WHERE a.id = :appealId`, {
    replacements: { appealId },
    type: QueryTypes.SELECT,
  });
  return row;
}

/**
 * Appeals with their order's parties, newest first, keyset-paged on the time-ordered id: in one status (any
 * when null), and, with `awaitingSecondApproval`, only the open ones whose refund waits for a second approver.
 */
export async function listAppealRows(
  filter: { status: AppealStatus | null; awaitingSecondApproval: boolean },
  before: string | null,
  take: number,
): Promise<AppealRow[]> {
  return models().query<AppealRow>(
    `${APPEAL_WITH_PARTIES}
      WHERE (CAST(:status AS text) IS NULL OR a.status = :status)
        AND (NOT :awaiting OR (a.status = 'open' AND a.first_approved_by IS NOT NULL))
        AND (CAST(:before AS uuid) IS NULL OR a.id < CAST(:before AS uuid))
      ORDER BY a.id DESC LIMIT :take`,
    {
      replacements: { status: filter.status, awaiting: filter.awaitingSecondApproval, before, take },
      type: QueryTypes.SELECT,
    },
  );
}

/** Who may appeal an order: its owner and, for a P2P trade, the ad's owner on the other side. */
export async function orderParties(orderId: string): Promise<{ owner: string; counterparty: string | null; method: string } | undefined> {
  const [row] = await models().query<{ owner: string; counterparty: string | null; method: string }>(
    `SELECT o.user_id AS owner, t.maker_id AS counterparty, o.method FROM orders o LEFT JOIN p2p_trades t ON t.order_id = o.id WHERE o.id = :orderId`,
    { replacements: { orderId }, type: QueryTypes.SELECT },
  );
  return row;
}

export interface NewAppeal {
  id: string;
  orderId: string;
  reason: AppealReason;
  description: string;
  evidence: { url: string; sha256?: string }[];
  createdBy: string;
  workflowId: string;
  slaMs: number;
}

/**
 * Record an appeal and run `andThen` (its workflow's start) in the same transaction, so an appeal exists only
 * with its workflow. A second open appeal of the order is a unique violation (`isDuplicate`).
 */
export async function createAppealRecord(appeal: NewAppeal, andThen: () => Promise<void>): Promise<void> {
  await models().transaction(async (transaction) => {
    await models().query(
      `INSERT INTO appeals (id, order_id, reason, description, evidence, created_by, workflow_id, sla_deadline)
       VALUES (:id, :orderId, :reason, :description, :evidence, :createdBy, :workflowId, now() + make_interval(secs => :slaSeconds))`,
      {
        replacements: {
          id: appeal.id,
          orderId: appeal.orderId,
          reason: appeal.reason,
          description: appeal.description,
          evidence: JSON.stringify(appeal.evidence),
          createdBy: appeal.createdBy,
          workflowId: appeal.workflowId,
          slaSeconds: appeal.slaMs / 1000,
        },
        transaction,
      },
    );
    await andThen();
  });
}

interface LockedAppeal {
  id: string;
  order_id: string;
  status: AppealStatus;
  resolution: AppealResolution | null;
  first_approval: FirstApproval | null;
}

/** The appeal, locked for the rest of `tx`. */
export async function lockAppeal(appealId: string, tx: Transaction): Promise<LockedAppeal | undefined> {
  const [appeal] = await models().query<LockedAppeal>(
    'SELECT id, order_id, status, resolution, first_approval FROM appeals WHERE id = :appealId FOR UPDATE',
    { replacements: { appealId }, type: QueryTypes.SELECT, transaction: tx },
  );
  return appeal;
}

/** Record the decision on an appeal (approved or rejected) with its resolution. */
export async function recordAppealDecision(
  d: { appealId: string; decision: 'approved' | 'rejected'; deciderId: string; note: string; resolution: AppealResolution },
  tx: Transaction,
): Promise<void> {
  await models().query(
    `UPDATE appeals SET status = :decision, decided_by = :deciderId, decided_at = now(), decision_note = :note,
            resolution = :resolution, updated_at = now()
      WHERE id = :appealId`,
    { replacements: { ...d, resolution: JSON.stringify(d.resolution) }, transaction: tx },
  );
}

/** A refund at or above `FOUR_EYES_ABOVE_KES` approved once: who, why, and the refund, waiting for a second approver. */
export async function recordFirstApproval(d: { appealId: string; approval: FirstApproval; note: string }, tx: Transaction): Promise<void> {
  await models().query(
    `UPDATE appeals SET first_approved_by = :approverId, first_approved_at = now(), first_approval_note = :note,
            first_approval = :approval, updated_at = now()
      WHERE id = :appealId AND status = 'open' AND first_approved_by IS NULL`,
    {
      replacements: { appealId: d.appealId, approverId: d.approval.approverId, note: d.note, approval: JSON.stringify(d.approval) },
      transaction: tx,
    },
  );
}

/** The SLA ran out: an appeal still open is expired. */
export async function expireOpenAppeal(appealId: string): Promise<void> {
  await models().query(`UPDATE appeals SET status = 'expired', updated_at = now() WHERE id = :appealId AND status = 'open'`, {
    replacements: { appealId },
  });
}
