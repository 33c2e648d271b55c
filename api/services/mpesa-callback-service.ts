import { config } from '../../platform/config';
import { isUuid } from '../../platform/ids';
import { componentLogger } from '../../platform/logger';
import { resolveB2cResult, resolveStkCallback, type DarajaResult, type DarajaResultKind, type StkCallback } from '../../connectors/daraja';
import type { RailOutcome } from '../../connectors';
import { findOrder } from '../../repositories/orders';
import { deliverRailOutcome } from './rail-outcome';

const log = componentLogger('mpesa-callbacks');

export interface DarajaAck {
  ResultCode: number;
  ResultDesc: string;
}

/**
 * An STK Push callback from Daraja. Taken only when it carries the order's callback token and names the
 * pending request we made for that order; anything else is acknowledged and ignored, so a forger learns
 * nothing and changes nothing.
 */
export async function handleStkCallback(orderId: string, token: string | undefined, body: StkCallback): Promise<DarajaAck> {
  const secret = config().daraja.callbackSecret;
  const resolved = secret && (await onDaraja(orderId)) ? await resolveStkCallback(secret, orderId, token, body) : null;
  if (!resolved) {
    log.warn({ orderId, checkout: body?.Body?.stkCallback?.CheckoutRequestID }, 'ignored an STK callback that matches no pending request');
    return IGNORED;
  }
  return signalOutcome(resolved.orderId, resolved.outcome);
}

/**
 * A B2C payout's result, its Transaction Status query's result, or its queue timeout, posted by Daraja to
 * the URLs Paygate gave it. Taken under the same rule as STK callbacks: the order's token, and a pending
 * payout of that order (for a result, the ConversationID and OriginatorConversationID recorded for the
 * payout; for a status result, those recorded for one of the status queries Paygate sent for it). A
 * timeout is acknowledged and decides nothing: the workflow's status query does.
 */
export async function handleB2cResult(
  orderId: string,
  kind: DarajaResultKind,
  token: string | undefined,
  body: DarajaResult,
): Promise<DarajaAck> {
  const secret = config().daraja.callbackSecret;
  const resolved = secret && (await onDaraja(orderId)) ? await resolveB2cResult(secret, orderId, token, kind, body) : null;
  if (!resolved) {
    if (kind === 'timeout') log.info({ orderId }, 'a B2C request timed out in the M-Pesa queue; the status query will tell');
    else log.warn({ orderId, kind, conversation: body?.Result?.ConversationID }, 'ignored a B2C result that resolves no pending payout');
    return IGNORED;
  }
  return signalOutcome(resolved.orderId, resolved.outcome);
}

const IGNORED: DarajaAck = { ResultCode: 1, ResultDesc: 'Ignored' };

/**
 * Only an order submitted on the Daraja rail can be resolved by a Daraja callback: the request it resolves
 * is one Daraja accepted (`rail_requests`), and the order, when there is one, records Daraja as its rail.
 */
async function onDaraja(orderId: string): Promise<boolean> {
  if (!isUuid(orderId)) return false;
  const order = await findOrder(orderId);
  return !order || order.rail === 'daraja';
}

async function signalOutcome(orderId: string, outcome: RailOutcome): Promise<DarajaAck> {
  const order = await findOrder(orderId);
  if (!order) return IGNORED;
  // The result is recorded on the request whatever happens next: a workflow still running takes it (or
  // its poll reads it); for a closed order it is also recorded as a late result and raised to operators.
  await deliverRailOutcome(order, 'daraja', outcome);
  return { ResultCode: 0, ResultDesc: 'Accepted' };
}
