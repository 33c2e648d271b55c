import { proxyActivities, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type { DepositActivities } from './activities/deposits';
import { LOCAL_DB_STEP, RAIL_CALL, withNonRetryable } from './presets';
import { DEPOSIT_NOT_FOUND } from './failure-types';
import { awaitRailOutcome, failureOf } from './outcome';
import { railOutcomeSignal, type DepositResult, type DepositWorkflowInput, type RailOutcomeSignal } from './shared';

/**
 * The `deposit` workflow (workflow id `deposit-<deposit_id>`, docs/wallets.md#m-pesa-stk-push): an M-Pesa STK Push collection.
 * Ask the payer's phone to pay; await the rail's callback (signal `railOutcome`) or, when it is late, ask the
 * rail (the STK query) with a growing interval; then credit the wallet, or fail the deposit. No money is
 * held while it waits: nothing moves until the rail says the payer paid. A prompt the payer never answers
 * expires at the rail, so past the settle deadline the deposit fails with `rail_timeout`.
 */

const db = proxyLocalActivities<DepositActivities>(withNonRetryable(LOCAL_DB_STEP, [DEPOSIT_NOT_FOUND]));
const rail = proxyActivities<DepositActivities>(withNonRetryable(RAIL_CALL, [DEPOSIT_NOT_FOUND]));

export async function deposit(input: DepositWorkflowInput): Promise<DepositResult> {
  const { depositId } = input;
  let outcome: RailOutcomeSignal | undefined;
  setHandler(railOutcomeSignal, (signalled) => {
    outcome ??= signalled;
  });

  try {
    await rail.requestCollection({ depositId });
  } catch (err) {
    const failure = failureOf(err);
    await db.failDeposit({ depositId, ...failure });
    return { depositId, status: 'failed', failureCode: failure.failureCode };
  }

  const final = await awaitRailOutcome({
    signalled: () => outcome,
    poll: () => rail.pollCollection({ depositId }),
    deadline: Date.now() + input.settleTimeoutMs,
    waitMs: input.pollAfterMs,
    maxIntervalMs: input.maxPollIntervalMs ?? 60_000,
    onDeadline: (reference) =>
      Promise.resolve({
        state: 'failed',
        reference,
        failureCode: 'rail_timeout',
        reason: 'the payer did not answer the payment prompt in time',
      }),
  });
  if (final.state === 'succeeded') {
    await db.creditDeposit({ depositId, reference: final.reference });
    return { depositId, status: 'completed' };
  }
  await db.failDeposit({ depositId, failureCode: final.failureCode, reason: final.reason });
  // The payer's money, signalled while the deposit was being given up, is credited on its own, never dropped.
  const late = outcome;
  if (late?.state === 'succeeded') await db.creditLatePayment({ depositId, reference: late.reference });
  return { depositId, status: 'failed', failureCode: final.failureCode };
}
