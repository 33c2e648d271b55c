import type { Caller } from '../domain/caller';
import { isStaff } from '../domain/caller';
import { actorOf } from '../domain/audit';
import { config } from '../platform/config';
import { AppError, notFound, validationError, type FieldError } from '../platform/errors';
import { isUuid, uuidv7 } from '../platform/ids';
import { componentLogger } from '../platform/logger';
import {
  APPEAL_ACTIONS,
  APPEAL_REASONS,
  APPEAL_STATUSES,
  appealWorkflowId,
  type AppealAction,
  type AppealReason,
  type AppealResolution,
  type AppealStatus,
  type AppealWorkflowInput,
} from '../domain/appeals/contract';
import { isDuplicate } from '../repositories/transaction';
import { findOrder, type OrderRecord } from '../repositories/orders';
import { formatAmount, isCurrency, parseAmount } from '../domain/money';
import { refuseOwnInterest } from './own-interest';
import { createAppealRecord, findAppeal, listAppealRows, orderParties, type AppealRow } from '../repositories/appeals';
import { filterOneOf, keysetPage, keysetQuery, type Page } from './paging';
import { decideAppealWorkflow, startAppealWorkflow } from '../workflows/client';

const log = componentLogger('appeals');

export interface EvidenceLink {
  /**
   * @example "https://files.example.com/mpesa-statement.pdf"
   * @maxLength 2048
   */
  url: string;
  /**
   * Hex SHA-256 of the linked file, so it can be shown unchanged later.
   * @maxLength 64
   */
  sha256?: string;
}

export interface AppealView {
  appeal_id: string;
  order_id: string;
  reason: AppealReason;
  description: string;
  evidence: EvidenceLink[];
  status: AppealStatus;
  created_by: string;
  created_at: string;
  /** When the appeal expires undecided. */
  sla_deadline: string;
  /** Staff only: the staff member who decided. The customer is never shown who approved or rejected. */
  decided_by?: string | null;
  decided_at: string | null;
  decision_note: string | null;
  resolution: AppealResolution | null;
  /**
   * A refund at or above `FOUR_EYES_ABOVE_KES` approved once and waiting, open, for a second, different staff
   * member's approval (staff only); null otherwise.
   */
  awaiting_second_approval?: AwaitingSecondApprovalView | null;
  workflow_id: string;
}

export interface AwaitingSecondApprovalView {
  /** The refund the first approver approved, which the second approval pays unchanged. */
  action: AppealAction;
  /** @example "150000.00" */
  amount: string;
  currency: string;
  /** Its KES equivalent at the reference rate: what is set against `FOUR_EYES_ABOVE_KES`. */
  kes_equivalent: string;
  approved_by: string;
  approved_at: string;
  note: string | null;
}

export interface AppealInput {
  order_id: unknown;
  reason: unknown;
  description: unknown;
  evidence?: unknown;
}

export interface DecisionInput {
  note: unknown;
  action?: unknown;
  amount?: unknown;
}

const toView = (row: AppealRow, staff: boolean): AppealView => ({
  appeal_id: row.id,
  order_id: row.order_id,
  reason: row.reason,
  description: row.description,
  evidence: row.evidence,
  status: row.status,
  created_by: row.created_by,
  created_at: new Date(row.created_at).toISOString(),
  sla_deadline: new Date(row.sla_deadline).toISOString(),
  ...(staff ? { decided_by: row.decided_by } : {}),
  decided_at: row.decided_at ? new Date(row.decided_at).toISOString() : null,
  decision_note: row.decision_note,
  resolution: row.resolution,
  ...(staff ? { awaiting_second_approval: awaitingView(row) } : {}),
  workflow_id: row.workflow_id,
});

const awaitingView = (row: AppealRow): AwaitingSecondApprovalView | null => {
  const first = row.first_approval;
  if (row.status !== 'open' || !first || !row.first_approved_at) return null;
  const currency = isCurrency(first.currency) ? first.currency : 'KES';
  return {
    action: first.action,
    amount: formatAmount(BigInt(first.amountMinor), currency),
    currency: first.currency,
    kes_equivalent: formatAmount(BigInt(first.kesEquivalentMinor), 'KES'),
    approved_by: first.approverId,
    approved_at: new Date(row.first_approved_at).toISOString(),
    note: row.first_approval_note,
  };
};

const mayRead = (caller: Caller, row: AppealRow): boolean =>
  isStaff(caller) || [row.created_by, row.order_owner, row.counterparty].includes(caller.id);

const loadAppeal = findAppeal;

function validateAppeal(input: AppealInput): { orderId: string; reason: AppealReason; description: string; evidence: EvidenceLink[] } {
  const errors: FieldError[] = [];
  if (typeof input.order_id !== 'string' || !isUuid(input.order_id)) errors.push({ field: 'order_id', message: 'must be a UUID' });
  if (typeof input.reason !== 'string' || !(APPEAL_REASONS as readonly string[]).includes(input.reason)) {
    errors.push({ field: 'reason', message: `must be one of ${APPEAL_REASONS.join(', ')}` });
  }
  const description = typeof input.description === 'string' ? input.description.trim() : '';
  if (description.length === 0 || description.length > 2000) errors.push({ field: 'description', message: 'must be 1 to 2000 characters' });
  const evidence: EvidenceLink[] = [];
  const raw = input.evidence ?? [];
  if (!Array.isArray(raw) || raw.length > 20) {
    errors.push({ field: 'evidence', message: 'must be a list of at most 20 {url, sha256?} links' });
  } else {
    raw.forEach((item: unknown, i) => {
      const link = (item ?? {}) as { url?: unknown; sha256?: unknown };
      let url: URL | undefined;
      try {
        url = typeof link.url === 'string' && link.url.length <= 2000 ? new URL(link.url) : undefined;
      } catch {
        url = undefined;
      }
      if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
        errors.push({ field: `evidence[${i}].url`, message: 'must be an http(s) URL of at most 2000 characters' });
      }
      if (link.sha256 !== undefined && (typeof link.sha256 !== 'string' || !/^[0-9a-f]{64}$/i.test(link.sha256))) {
        errors.push({ field: `evidence[${i}].sha256`, message: 'must be 64 hexadecimal characters' });
      }
      if (url && typeof link.url === 'string') {
        evidence.push(typeof link.sha256 === 'string' ? { url: link.url, sha256: link.sha256.toLowerCase() } : { url: link.url });
      }
    });
  }
  if (errors.length > 0) throw new AppError('validation_failed', errors.map((e) => `${e.field}: ${e.message}`).join('; '), { errors });
  return { orderId: input.order_id as string, reason: input.reason as AppealReason, description, evidence };
}

/**
 * Appeal an order (docs/appeals.md#opening-an-appeal): only its owner or, for a P2P trade, the counterparty; one open appeal per
 * order. Starts workflow `appeal-<appeal_id>` in the same database transaction, so an appeal exists only
 * with its workflow.
 */
export async function createAppeal(caller: Caller, body: AppealInput): Promise<AppealView> {
  const input = validateAppeal(body);
  const parties = await orderParties(input.orderId);
  if (!parties || (parties.owner !== caller.id && parties.counterparty !== caller.id)) {
    throw new AppError('not_found', `order ${input.orderId} not found`);
  }
  const cfg = config();
  const id = uuidv7();
  const workflowInput: AppealWorkflowInput = {
    appealId: id,
    orderId: input.orderId,
    appellantId: caller.id,
    orderOwnerId: parties.owner,
    counterpartyId: parties.counterparty,
    orderMethod: parties.method,
    slaMs: cfg.appeals.slaMs,
    pollAfterMs: cfg.payments.pollAfterMs,
    settleTimeoutMs: cfg.payments.settleTimeoutMs,
  };
  try {
    await createAppealRecord(
      {
        id,
        orderId: input.orderId,
        reason: input.reason,
        description: input.description,
        evidence: input.evidence,
        createdBy: caller.id,
        workflowId: appealWorkflowId(id),
        slaMs: cfg.appeals.slaMs,
      },
      async () => {
        try {
          await startAppealWorkflow(workflowInput, { reason: input.reason, method: parties.method });
        } catch (err) {
          log.warn({ appealId: id, err: (err as Error).message }, 'appeal workflow could not be started');
          throw new AppError('dependency_unavailable', 'the workflow engine is unavailable; try again');
        }
      },
    );
  } catch (err) {
    if (isDuplicate(err)) throw new AppError('conflict', `order ${input.orderId} already has an open appeal`);
    throw err;
  }
  return getAppeal(caller, id);
}

/** One appeal: its appellant, the order's parties and staff read it; anyone else gets 404. */
export async function getAppeal(caller: Caller, appealId: string): Promise<AppealView> {
  if (!isUuid(appealId)) throw validationError('appeal_id', 'must be a UUID');
  const row = await loadAppeal(appealId);
  if (!row || !mayRead(caller, row)) throw new AppError('not_found', `appeal ${appealId} not found`);
  return toView(row, isStaff(caller));
}

/**
 * Appeals, newest first (staff): `status` filters, and `awaiting_second_approval=true` lists the refunds at or
 * above `FOUR_EYES_ABOVE_KES` approved once and waiting for a second pair of eyes.
 */
export async function listAppeals(q: {
  status?: string;
  awaitingSecondApproval?: boolean;
  limit?: number;
  cursor?: string;
}): Promise<Page<AppealView>> {
  const status = filterOneOf('status', q.status, APPEAL_STATUSES);
  const { limit, before } = keysetQuery(q);
  const rows = await listAppealRows(
    { status: status ?? null, awaitingSecondApproval: q.awaitingSecondApproval === true },
    before,
    limit + 1,
  );
  return keysetPage(rows, limit, (row) => toView(row, true));
}

const REFUSAL_CODES: Record<string, 'forbidden' | 'conflict'> = { forbidden: 'forbidden', conflict: 'conflict' };

/** A partial refund's amount, in minor units of the appealed payment's currency. */
async function refundAmountMinor(orderId: string, amount: unknown): Promise<string> {
  const order = await findOrder(orderId);
  if (!order || !isCurrency(order.currency)) throw notFound(`order ${orderId}`);
  return parseAmount(amount, order.currency, 'amount').toString();
}

/**
 * Nobody decides an appeal in which they have an own interest (docs/compliance.md#own-interest): the
 * appellant, the payer (the order's owner), the payee (the trade's other side, or the destination's name and
 * phone) must not be the staff member nor share their name, phone, e-mail or ID number.
 */
async function refuseOwnAppealInterest(caller: Caller, row: AppealRow): Promise<void> {
  const order: OrderRecord | null = await findOrder(row.order_id);
  const destination = order?.destination ?? {};
  await refuseOwnInterest(
    caller,
    'an appeal',
    [
      { role: 'appellant', userId: row.created_by },
      { role: 'payer', userId: row.order_owner },
      { role: 'payee', userId: row.counterparty },
    ],
    [{ role: 'payee', name: destination.account_name, phone: destination.phone }],
  );
}

/**
 * Approve or reject an appeal through its workflow's Update: the workflow's validator decides who may
 * (role, not a party, still open); the answer comes once the resolution has run.
 */
export async function decideAppeal(
  caller: Caller,
  appealId: string,
  decision: 'approve' | 'reject',
  body: DecisionInput,
): Promise<AppealView> {
  if (!isUuid(appealId)) throw validationError('appeal_id', 'must be a UUID');
  const errors: FieldError[] = [];
  const note = typeof body.note === 'string' ? body.note.trim() : '';
  if (note.length === 0 || note.length > 2000) errors.push({ field: 'note', message: 'must be 1 to 2000 characters' });
  const action = body.action ?? undefined;
  if (action !== undefined && (decision === 'reject' || !(APPEAL_ACTIONS as readonly unknown[]).includes(action))) {
    errors.push({
      field: 'action',
      message: decision === 'reject' ? 'only when approving' : `must be one of ${APPEAL_ACTIONS.join(', ')}`,
    });
  }
  const amount = body.amount ?? undefined;
  if (amount !== undefined && (decision === 'reject' || (action !== undefined && action !== 'refund'))) {
    errors.push({ field: 'amount', message: 'only when approving a refund' });
  }
  if (errors.length > 0) throw new AppError('validation_failed', errors.map((e) => `${e.field}: ${e.message}`).join('; '), { errors });

  const row = await loadAppeal(appealId);
  const amountMinor = row && amount !== undefined ? await refundAmountMinor(row.order_id, amount) : undefined;
  // Staff see every appeal; a user who may not read it learns nothing more than a 403.
  if (!row)
    throw new AppError(
      isStaff(caller) ? 'not_found' : 'forbidden',
      isStaff(caller) ? `appeal ${appealId} not found` : 'only compliance staff or admins decide appeals',
    );
  // A decided or expired appeal's workflow has closed: nothing left to ask it.
  if (row.status !== 'open' && isStaff(caller)) throw new AppError('conflict', `the appeal is ${row.status}`);
  if (isStaff(caller)) await refuseOwnAppealInterest(caller, row);
  // A refund approved once waits for its second approval: an approval now is that one.
  const update = decision === 'approve' && row.first_approval ? 'approve-second' : decision;
  let answer: Awaited<ReturnType<typeof decideAppealWorkflow>>;
  try {
    answer = await decideAppealWorkflow(row.workflow_id, update, {
      deciderId: caller.id,
      deciderRoles: caller.roles,
      note,
      ...(action ? { action: action as AppealAction } : {}),
      ...(amountMinor !== undefined ? { amountMinor } : {}),
      actor: actorOf(caller),
    });
  } catch (err) {
    log.warn({ appealId, err: (err as Error).message }, 'appeal decision failed');
    throw new AppError('dependency_unavailable', 'the workflow engine is unavailable; try again');
  }
  if (answer.refused) {
    const code = REFUSAL_CODES[answer.refused.type];
    if (code) throw new AppError(code, answer.refused.message);
    log.warn({ appealId, err: answer.refused.message }, 'appeal decision failed');
    throw new AppError('dependency_unavailable', 'the workflow engine is unavailable; try again');
  }
  // The workflow has closed: the appeal was decided or expired.
  if (answer.closed) {
    if (!isStaff(caller)) throw new AppError('forbidden', 'only compliance staff or admins decide appeals');
    throw new AppError('conflict', `the appeal is ${(await loadAppeal(appealId))?.status ?? 'closed'}`);
  }
  return getAppeal(caller, appealId);
}
