import { ActivityFailure, ApplicationFailure, condition, proxyActivities, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type { DepositActivities } from './activities/deposits';
import { LOCAL_DB_STEP, RAIL_CALL, withNonRetryable } from './presets';
import { railOutcomeSignal, type DepositResult, type DepositWorkflowInput, type RailOutcomeSignal } from './shared';

/**
 * The `deposit` workflow (workflow id `deposit-<deposit_id>`, SPEC §11): an M-Pesa STK Push collection.
 * Ask the payer's phone to pay; await the rail's callback (signal `railOutcome`) or, when it is late, ask the
 * rail (the STK query) with a growing interval; then credit the wallet, or fail the deposit. No money is
 * held while it waits: nothing moves until the rail says the payer paid. A prompt the payer never answers
 * expires at the rail, so past the settle deadline the deposit fails with `rail_timeout`.
 */

const db = proxyLocalActivities<DepositActivities>(withNonRetryable(LOCAL_DB_STEP, ['DepositNotFound']));
const rail = proxyActivities<DepositActivities>(withNonRetryable(RAIL_CALL, ['DepositNotFound']));

function failureOf(err: unknown): { failureCode: string; reason: string } {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure) {
    const [details] = (cause.details ?? []) as { failureCode?: string }[];
    return { failureCode: details?.failureCode ?? 'rail_error', reason: cause.message };
  }
  return { failureCode: 'rail_error', reason: err instanceof Error ? err.message : 'the rail failed' };
}

export async function deposit(input: DepositWorkflowInput): Promise<DepositResult> {
  const { depositId } = input;
  let outcome: RailOutcomeSignal | undefined;
  setHandler(railOutcomeSignal, (signalled) => {
    outcome ??= signalled;
  });

  let reference: string;
  try {
    ({ reference } = await rail.requestCollection({ depositId }));
  } catch (err) {
    const failure = failureOf(err);
    await db.failDeposit({ depositId, ...failure });
    return { depositId, status: 'failed', failureCode: failure.failureCode };
  }

  const final = await awaitCollection(input, reference, () => outcome);
  if (final.state === 'succeeded') {
    await db.creditDeposit({ depositId, reference: final.reference });
    return { depositId, status: 'completed' };
  }
  await db.failDeposit({ depositId, failureCode: final.failureCode, reason: final.reason });
  return { depositId, status: 'failed', failureCode: final.failureCode };
}

/** The callback (signal) or, when it is late, the rail's answer to a poll; past the deadline, `rail_timeout`. */
async function awaitCollection(
  input: DepositWorkflowInput,
  reference: string,
  signalled: () => RailOutcomeSignal | undefined,
): Promise<RailOutcomeSignal> {
  const deadline = Date.now() + input.settleTimeoutMs;
  let wait = input.pollAfterMs;
  for (;;) {
    await condition(() => signalled() !== undefined, Math.max(1, Math.min(wait, deadline - Date.now())));
    const early = signalled();
    if (early) return early;
    const polled = await rail.pollCollection({ depositId: input.depositId });
    if (polled.state !== 'pending') return signalled() ?? polled;
    if (Date.now() >= deadline) {
      return { state: 'failed', reference, failureCode: 'rail_timeout', reason: 'the payer did not answer the payment prompt in time' };
    }
    wait = Math.min(wait * 2, input.maxPollIntervalMs ?? 60_000);
  }
}
