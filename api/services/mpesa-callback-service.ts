import { WorkflowNotFoundError } from '@temporalio/client';
import { config } from '../../platform/config';
import { database } from '../../platform/database';
import { AppError } from '../../platform/errors';
import { isUuid } from '../../platform/ids';
import { componentLogger } from '../../platform/logger';
import { temporalClient } from '../../platform/temporal';
import { Order } from '../../models';
import { resolveStkCallback, type StkCallback } from '../../domain/connectors/daraja';
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
    return { ResultCode: 1, ResultDesc: 'Ignored' };
  }
  const order = await Order.findByPk(resolved.orderId, { attributes: ['id', 'workflowId'] });
  if (!order) return { ResultCode: 1, ResultDesc: 'Ignored' };
  try {
    await temporalClient().workflow.getHandle(order.workflowId).signal(railOutcomeSignal, resolved.outcome);
  } catch (err) {
    // Finished already: the result is recorded on the request, and the workflow's poll read it.
    if (err instanceof WorkflowNotFoundError) return { ResultCode: 0, ResultDesc: 'Accepted' };
    log.warn({ orderId, err: (err as Error).message }, 'could not signal the payment workflow; its poll will read the recorded result');
    throw new AppError('dependency_unavailable', 'the workflow engine is unavailable');
  }
  return { ResultCode: 0, ResultDesc: 'Accepted' };
}
