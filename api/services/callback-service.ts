import { config } from '../../platform/config';
import { AppError } from '../../platform/errors';
import { isUuid } from '../../platform/ids';
import { describeFailure, verifySandboxCallback, type SandboxCallbackBody } from '../../connectors/sandbox';
import type { RailOutcomeSignal } from '../../workflows/shared';
import { findOrder } from '../../repositories/orders';
import { deliverRailOutcome } from './rail-outcome';

/** Whether any method pays through the sandbox rail: without one, its callback endpoint is not mounted. */
export const sandboxRailInUse = (): boolean => Object.values(config().rails).includes('sandbox');

/**
 * A signed outcome from the sandbox rail: tie it to its order and signal the order's workflow. Only an
 * order submitted on the sandbox rail can be resolved by it; any other order is unknown here (404), as a
 * sandbox outcome says nothing about money a real rail moved.
 */
export async function handleSandboxCallback(rawBody: string, signature: string | undefined): Promise<void> {
  if (!verifySandboxCallback(config().sandbox.callbackSecret, rawBody, signature)) {
    throw new AppError('unauthenticated', 'the callback signature is not valid');
  }
  const body = JSON.parse(rawBody) as SandboxCallbackBody;
  // Tie the callback to its order by the merchant reference the rail echoes: the callback may arrive
  // before the submitting activity has recorded the rail's own reference on the order (never before the rail).
  const order = isUuid(body.merchant_reference) ? await findOrder(body.merchant_reference) : null;
  if (!order || order.rail !== 'sandbox' || (order.railReference !== null && order.railReference !== body.reference)) {
    throw new AppError('not_found', `no order for rail reference ${body.reference}`);
  }
  const outcome: RailOutcomeSignal =
    body.status === 'succeeded'
      ? { state: 'succeeded', reference: body.reference, providerCode: body.provider_code ?? undefined }
      : {
          state: 'failed',
          reference: body.reference,
          failureCode: body.failure_code ?? 'rail_error',
          reason: describeFailure(body.failure_code ?? 'rail_error', body.provider_code),
          providerCode: body.provider_code ?? undefined,
        };
  await deliverRailOutcome(order, 'sandbox', outcome);
}
