import { QueryTypes, type Transaction, type WhereOptions } from 'sequelize';
import { LateRailResult, RailRequest, RailStatusQuery, models } from '../models';
import { uuidv7 } from '../platform/ids';

/**
 * What Paygate asked of the rails and what they answered: `rail_requests` (a payout or collection a rail
 * accepted, matched to its asynchronous result), `rail_status_queries` (a status query sent, matched to its
 * answer) and `late_rail_results` (results that came after their order closed, kept for operators).
 */

export type RailRequestKind = 'stk' | 'b2c';
export type RailRequestStatus = 'pending' | 'succeeded' | 'failed';

/** A rail request as the connectors read it. */
export interface RailRequestRow {
  order_id: string;
  kind: RailRequestKind;
  provider_reference: string;
  merchant_reference: string | null;
  status: RailRequestStatus;
  result_code: string | null;
  result_desc: string | null;
}

const REQUEST_COLUMNS = ['orderId', 'kind', 'providerReference', 'merchantReference', 'status', 'resultCode', 'resultDesc'] as const;

function row(request: RailRequest | null): RailRequestRow | undefined {
  if (!request) return undefined;
  return {
    order_id: request.orderId,
    kind: request.kind as RailRequestKind,
    provider_reference: request.providerReference,
    merchant_reference: request.merchantReference,
    status: request.status as RailRequestStatus,
    result_code: request.resultCode,
    result_desc: request.resultDesc,
  };
}

/** The order's request of this kind on the rail, whatever its status. */
export async function findRailRequest(rail: string, orderId: string, kind: RailRequestKind): Promise<RailRequestRow | undefined> {
  return row(await RailRequest.findOne({ where: { rail, orderId, kind }, attributes: [...REQUEST_COLUMNS] }));
}

/** The order's request on the rail, of whatever kind and status (an order or deposit makes one per rail). */
export async function railRequestOf(rail: string, orderId: string): Promise<RailRequestRow | undefined> {
  return row(await RailRequest.findOne({ where: { rail, orderId }, attributes: [...REQUEST_COLUMNS] }));
}

/** The order's request of this kind that still waits for its result. */
export async function pendingRailRequest(rail: string, orderId: string, kind: RailRequestKind): Promise<RailRequestRow | undefined> {
  return row(await RailRequest.findOne({ where: { rail, orderId, kind, status: 'pending' }, attributes: [...REQUEST_COLUMNS] }));
}

/** The request the rail knows by this reference. */
export async function railRequestByReference(rail: string, providerReference: string): Promise<RailRequestRow | undefined> {
  return row(await RailRequest.findOne({ where: { rail, providerReference }, attributes: [...REQUEST_COLUMNS] }));
}

/**
 * Record a request the rail accepted (in the transaction that records its reference on the order or
 * deposit); a second record of the same request is ignored.
 */
export async function recordRailRequest(
  request: {
    rail: string;
    orderId: string;
    kind: RailRequestKind;
    providerReference: string;
    merchantReference: string | null;
  },
  tx?: Transaction,
): Promise<void> {
  await models().query(
    `INSERT INTO rail_requests (id, rail, order_id, kind, provider_reference, merchant_reference)
     VALUES (:id, :rail, :orderId, :kind, :providerReference, :merchantReference) ON CONFLICT DO NOTHING`,
    { replacements: { id: uuidv7(), ...request }, transaction: tx },
  );
}

/** Which pending request a result resolves: the rail's reference, narrowed by whatever else the result names. */
export interface ResultMatch {
  rail: string;
  providerReference: string;
  orderId?: string;
  kind?: RailRequestKind;
  merchantReference?: string;
}

/**
 * Record a rail's result on the pending request it matches (a conditional update: a result is taken once).
 * Returns whether a request was resolved.
 */
export async function resolveRailRequest(
  match: ResultMatch,
  result: { status: Exclude<RailRequestStatus, 'pending'>; resultCode: string; resultDesc: string | null; receipt?: string | null },
): Promise<boolean> {
  const where: WhereOptions<RailRequest> = { ...match, status: 'pending' };
  const [resolved] = await RailRequest.update(
    {
      status: result.status,
      resultCode: result.resultCode,
      resultDesc: result.resultDesc,
      ...(result.receipt === undefined ? {} : { receipt: result.receipt }),
      resolvedAt: models().fn('now'),
    },
    { where },
  );
  return resolved > 0;
}

/** Record a status query the rail accepted, so that only its answer is taken. */
export async function recordStatusQuery(query: {
  rail: string;
  orderId: string;
  conversationId: string;
  originatorConversationId: string;
}): Promise<void> {
  await models().query(
    `INSERT INTO rail_status_queries (rail, order_id, conversation_id, originator_conversation_id)
     VALUES (:rail, :orderId, :conversationId, :originatorConversationId) ON CONFLICT DO NOTHING`,
    { replacements: query },
  );
}

/** Whether Paygate sent this status query for the order. */
export async function sentStatusQuery(query: {
  rail: string;
  orderId: string;
  conversationId: string;
  originatorConversationId: string;
}): Promise<boolean> {
  return (await RailStatusQuery.count({ where: query })) > 0;
}

export type LateVerdict = 'agrees' | 'contradicts' | 'unsettled';

/** Keep a result that came after its order closed, for the operator. */
export async function recordLateResult(late: {
  orderId: string;
  rail: string;
  orderStatus: string;
  outcome: Record<string, unknown>;
  verdict: LateVerdict;
}): Promise<void> {
  await LateRailResult.create(late);
}

/** Late results by verdict (metrics). */
export async function countLateResultsByVerdict(tx?: Transaction): Promise<{ verdict: string; n: number }[]> {
  return models().query<{ verdict: string; n: number }>('SELECT verdict, count(*)::int AS n FROM late_rail_results GROUP BY verdict', {
    type: QueryTypes.SELECT,
    transaction: tx,
  });
}
