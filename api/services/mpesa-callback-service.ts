import { WorkflowNotFoundError } from '@temporalio/client';
import { config } from '../../platform/config';
import { database } from '../../platform/database';
import { AppError } from '../../platform/errors';
import { isUuid } from '../../platform/ids';
import { componentLogger } from '../../platform/logger';
import { temporalClient } from '../../platform/temporal';
import { Order } from '../../models';
import {
  resolveB2cResult,
  resolveStkCallback,
  type DarajaResult,
  type DarajaResultKind,
  type StkCallback,
} from '../../domain/connectors/daraja';
import type { RailOutcome } from '../../domain/connectors';
import { railOutcomeSignal } from '../../workflows/shared';

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
  const resolved = secret && isUuid(orderId) ? await resolveStkCallback(database(), secret, orderId, token, body) : null;
  if (!resolved) {
    log.warn({ orderId, checkout: body?.Body?.stkCallback?.CheckoutRequestID }, 'ignored an STK callback that matches no pending request');
    return IGNORED;
  }
  return signalOutcome(resolved.orderId, resolved.outcome);
}

/**
 * A B2C payout's result, its Transaction Status query's result, or its queue timeout, posted by Daraja to
 * the URLs Paygate gave it. Taken under the same rule as STK callbacks: the order's token, and a pending
 * payout of that order (for a result, the ConversationID and OriginatorConversationID it recorded). A
 * timeout is acknowledged and decides nothing: the workflow's status query does.
 */
export async function handleB2cResult(
  orderId: string,
  kind: DarajaResultKind,
  token: string | undefined,
  body: DarajaResult,
): Promise<DarajaAck> {
  const secret = config().daraja.callbackSecret;
  const resolved = secret && isUuid(orderId) ? await resolveB2cResult(database(), secret, orderId, token, kind, body) : null;
  if (!resolved) {
    if (kind === 'timeout') log.info({ orderId }, 'a B2C request timed out in the M-Pesa queue; the status query will tell');
    else log.warn({ orderId, kind, conversation: body?.Result?.ConversationID }, 'ignored a B2C result that resolves no pending payout');
    return IGNORED;
  }
  return signalOutcome(resolved.orderId, resolved.outcome);
}

const IGNORED: DarajaAck = { ResultCode: 1, ResultDesc: 'Ignored' };

async function signalOutcome(orderId: string, outcome: RailOutcome): Promise<DarajaAck> {
  const order = await Order.findByPk(orderId, { attributes: ['id', 'workflowId'] });
  if (!order) return IGNORED;
  try {
    await temporalClient().workflow.getHandle(order.workflowId).signal(railOutcomeSignal, outcome);
  } catch (err) {
    // Finished already: the result is recorded on the request, and the workflow's poll read it.
    if (err instanceof WorkflowNotFoundError) return { ResultCode: 0, ResultDesc: 'Accepted' };
    log.warn({ orderId, err: (err as Error).message }, 'could not signal the payment workflow; its poll will read the recorded result');
    throw new AppError('dependency_unavailable', 'the workflow engine is unavailable');
  }
  return { ResultCode: 0, ResultDesc: 'Accepted' };
}
