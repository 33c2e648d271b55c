import { WorkflowNotFoundError } from '@temporalio/client';
import { config } from '../../platform/config';
import { AppError } from '../../platform/errors';
import { isUuid } from '../../platform/ids';
import { componentLogger } from '../../platform/logger';
import { temporalClient } from '../../platform/temporal';
import { Order } from '../../models';
import { describeFailure, verifySandboxCallback, type SandboxCallbackBody } from '../../domain/connectors/sandbox';
import { railOutcomeSignal, type RailOutcomeSignal } from '../../workflows/shared';

const log = componentLogger('callbacks');

/** A signed outcome from the sandbox rail: tie it to its order and signal the order's workflow. */
export async function handleSandboxCallback(rawBody: string, signature: string | undefined): Promise<void> {
  if (!verifySandboxCallback(config().sandbox.callbackSecret, rawBody, signature)) {
    throw new AppError('unauthenticated', 'the callback signature is not valid');
  }
  const body = JSON.parse(rawBody) as SandboxCallbackBody;
  // Tie the callback to its order by the merchant reference the rail echoes: the callback may arrive
  // before the submitting activity has recorded the rail's own reference on the order.
  const order = isUuid(body.merchant_reference)
    ? await Order.findByPk(body.merchant_reference, { attributes: ['id', 'workflowId', 'railReference'] })
    : null;
  if (!order || (order.railReference !== null && order.railReference !== body.reference)) {
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
  try {
    await temporalClient().workflow.getHandle(order.workflowId).signal(railOutcomeSignal, outcome);
  } catch (err) {
    // The workflow already finished (it resolved the outcome by polling): the callback is a duplicate.
    if (err instanceof WorkflowNotFoundError) return;
    log.warn({ orderId: order.id, err: (err as Error).message }, 'could not signal the payment workflow');
    throw new AppError('dependency_unavailable', 'the workflow engine is unavailable; retry the callback');
  }
}
