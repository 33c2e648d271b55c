import { config } from '../platform/config';
import { AppError } from '../platform/errors';
import { isUuid } from '../platform/ids';
import { describeFailure, verifySandboxCallback, type SandboxCallbackBody } from '../connectors/sandbox';
import type { RailOutcomeSignal } from '../workflows/shared';
import { findDeposit } from '../repositories/deposits';
import { findOrder } from '../repositories/orders';
import { signalDepositOutcome } from '../workflows/client';
import { deliverRailOutcome } from './rail-outcome';
import { creditLateCollection } from './late-deposits';

/** Whether any method pays through the sandbox rail: without one, its callback endpoint is not mounted. */
export const sandboxRailInUse = (): boolean => Object.values(config().rails).includes('sandbox');

/**
 * A signed outcome from the sandbox rail: tie it to its order (or STK Push deposit) and signal its workflow.
 * Only an order or deposit on the sandbox rail can be resolved by it; anything else is unknown here (404), as
 * a sandbox outcome says nothing about money a real rail moved.
 */
export async function handleSandboxCallback(rawBody: string, signature: string | undefined): Promise<void> {
  if (!verifySandboxCallback(config().sandbox.callbackSecret, rawBody, signature)) {
    throw new AppError('unauthenticated', 'the callback signature is not valid');
  }
  const body = JSON.parse(rawBody) as SandboxCallbackBody;
  // Tie the callback to its order by the merchant reference the rail echoes: the callback may arrive
  // before the submitting activity has recorded the rail's own reference on the order (never before the rail).
  const order = isUuid(body.merchant_reference) ? await findOrder(body.merchant_reference) : null;
  if (!order) {
    // Not an order: a deposit Paygate collects on the sandbox rail (an STK Push), or nothing known here.
    const deposit = isUuid(body.merchant_reference) ? await findDeposit(body.merchant_reference) : undefined;
    if (!deposit || deposit.rail !== 'sandbox' || (deposit.rail_reference !== null && deposit.rail_reference !== body.reference)) {
      throw new AppError('not_found', `no order for rail reference ${body.reference}`);
    }
    const outcome = outcomeOf(body);
    if (deposit.status === 'pending') await signalDepositOutcome(deposit.id, outcome);
    // Paid after the deposit was given up: credited on its own, never dropped (docs/wallets.md#money-in-is-proven).
    else if (outcome.state === 'succeeded') await creditLateCollection(deposit, outcome.reference);
    return;
  }
  if (order.rail !== 'sandbox' || (order.railReference !== null && order.railReference !== body.reference)) {
    throw new AppError('not_found', `no order for rail reference ${body.reference}`);
  }
  await deliverRailOutcome(order, 'sandbox', outcomeOf(body));
}

/** A sandbox callback as the rail outcome a workflow takes. */
function outcomeOf(body: SandboxCallbackBody): RailOutcomeSignal {
  return body.status === 'succeeded'
    ? { state: 'succeeded', reference: body.reference, providerCode: body.provider_code ?? undefined }
    : {
        state: 'failed',
        reference: body.reference,
        failureCode: body.failure_code ?? 'rail_error',
        reason: describeFailure(body.failure_code ?? 'rail_error', body.provider_code),
        providerCode: body.provider_code ?? undefined,
      };
}
