import { ApplicationFailure } from '@temporalio/common';
import type { WorkflowHandle } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { expect } from 'chai';
import { INSUFFICIENT_FUNDS, RAIL_OUTCOME_UNKNOWN, RAIL_REJECTED, RAIL_UNAVAILABLE } from '../../workflows/failure-types';
import {
  railOutcomeSignal,
  screeningDecisionSignal,
  type PaymentResult,
  type PaymentWorkflowInput,
  type RailOutcomeSignal,
} from '../../workflows/shared';
import { PAYGATE_STATUS, orderSearchAttributes } from '../../workflows/search-attributes';
import { prepareWorkflows, runWorkflow, untilStage, type Mock, type Run } from './harness';

const ORDER = 'order-under-test';
const REFERENCE = 'RAIL-REF-1';

/** A payment's input with short timers: the rail is polled after 10 ms, the deadline is a minute away. */
const input = (over: Partial<PaymentWorkflowInput> = {}): PaymentWorkflowInput => ({
  orderId: ORDER,
  pollAfterMs: 10,
  settleTimeoutMs: 60_000,
  maxPollIntervalMs: 20,
  reviewSlaMs: 60_000,
  ...over,
});

/**
 * Activities of a payment that goes through: admitted in one step (screened clear, within limits, held), taken
 * and settled by the rail. The one-by-one steps answer as a clear payment's would, for the runs that take them.
 */
const happy = (over: Record<string, Mock> = {}): Record<string, Mock> => {
  const steps = stepByStep(over);
  return { admitAndSubmit: admitThenSubmit(steps), ...steps };
};

/**
 * As the worker's `admitAndSubmit` does: admission (this run's `admitPayment`), then, once held, the submission
 * (its `submitToRail`), whose failure is the activity's. Each runs inside the one call, so only `admitAndSubmit`
 * is counted among the run's calls.
 */
const admitThenSubmit =
  (steps: Record<string, Mock>): Mock =>
  async (ref: never) => {
    const admission = (await steps.admitPayment(ref)) as { admitted: string; accounts?: unknown };
    if (admission.admitted !== 'held') return admission;
    await steps.submitToRail(ref);
    return { admitted: 'submitted', ...(admission.accounts ? { accounts: admission.accounts } : {}) };
  };

const stepByStep = (over: Record<string, Mock>): Record<string, Mock> => ({
  admitPayment: () => ({ admitted: 'held' }),
  screenPayment: () => ({ blocked: false }),
  monitorOrder: () => ({ refused: false }),
  concludeReview: () => ({ status: 'cleared' }),
  checkLimits: () => null,
  rejectOrder: () => undefined,
  holdFunds: () => undefined,
  submitToRail: () => ({ reference: REFERENCE }),
  pollRail: () => ({ state: 'succeeded', reference: REFERENCE }),
  flagOverdue: () => undefined,
  settlePayment: () => undefined,
  releaseHold: () => undefined,
  failOrder: () => undefined,
  railSubmissionOf: () => 'accepted',
  noteOutcomeUnknown: () => undefined,
  ...over,
});

const payment = (
  activities: Record<string, Mock>,
  over: Partial<PaymentWorkflowInput> = {},
  body?: (run: Run<PaymentResult>) => Promise<void>,
) => runWorkflow<PaymentResult>('payment', [input(over)], activities, body);

/** A payment started as the api starts it: with the order's search attributes, so it keeps `PaygateStatus` in step. */
const trackedPayment = (
  activities: Record<string, Mock>,
  over: Partial<PaymentWorkflowInput>,
  body: (run: Run<PaymentResult>) => Promise<void>,
) =>
  runWorkflow<PaymentResult>('payment', [input(over)], activities, body, {
    typedSearchAttributes: orderSearchAttributes({ orderId: ORDER, status: 'pending' }),
  });

/** The values of `PaygateStatus` a closed run upserted, in order, and its history. */
async function statusesOf(run: Run<PaymentResult>): Promise<{ statuses: string[]; history: temporal.api.history.v1.IHistory }> {
  await run.result;
  const history = await run.handle.fetchHistory();
  const statuses = (history.events ?? []).flatMap((e) => {
    const field = e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.[PAYGATE_STATUS.name];
    return field?.data ? [JSON.parse(Buffer.from(field.data).toString()) as string] : [];
  });
  return { statuses, history };
}

/**
 * A payment started as the api starts it whose rail calls back before `admitAndSubmit` answers, as the sandbox's
 * immediate callback does: the signal is in the run's history before the activity's result. Answers the run's
 * result, its calls, the `PaygateStatus` values it upserted and its history.
 */
async function callbackFirst(outcome: RailOutcomeSignal, over: Partial<PaymentWorkflowInput>, activities: Record<string, Mock> = {}) {
  let started: (handle: WorkflowHandle) => void = () => {};
  const handle = new Promise<WorkflowHandle>((resolve) => (started = resolve));
  const steps = stepByStep(activities);
  const admitAndSubmit = async (ref: never) => {
    const answer = await admitThenSubmit(steps)(ref);
    await (await handle).signal(railOutcomeSignal, outcome);
    return answer;
  };
  let seen: Awaited<ReturnType<typeof statusesOf>> = { statuses: [], history: {} };
  let calls: string[] = [];
  const result = await trackedPayment({ ...steps, admitAndSubmit }, { pollAfterMs: 60_000, ...over }, async (run) => {
    started(run.handle);
    seen = await statusesOf(run);
    calls = run.calls;
  });
  return { result, calls, ...seen };
}

describe('workflow unit: payment', function () {
  this.timeout(60_000);
  before(async function () {
    this.timeout(120_000);
    await prepareWorkflows();
  });

  describe('when admission finds screening, monitoring or the limits refuse the order', () => {
    it('then it is rejected with the refusal’s code and nothing else runs', async () => {
      let calls: string[] = [];
      const blocked = happy({ admitPayment: () => ({ admitted: 'rejected', failureCode: 'blocked_by_compliance' }) });
      const result = await payment(blocked, {}, async (run) => {
        await run.result;
        calls = run.calls;
      });
      expect(result).to.deep.equal({ orderId: ORDER, status: 'rejected', failureCode: 'blocked_by_compliance' });
      expect(calls).to.deep.equal(['admitAndSubmit']);
    });
  });

  describe('when screening holds the order for review and staff clear it', () => {
    it('then the decision signal ends the wait and the payment goes on to settle', async () => {
      let calls: string[] = [];
      const held = happy({
        admitPayment: () => ({ admitted: 'screening_review' }),
        screenPayment: () => ({ blocked: false, review: { hitId: 'hit-1', reviewSlaMs: 60_000 } }),
      });
      const result = await payment(held, {}, async (run) => {
        await untilStage(run.handle, 'awaiting_review');
        await run.handle.signal(screeningDecisionSignal, { decision: 'cleared' });
        await run.result;
        calls = run.calls;
      });
      expect(result).to.deep.equal({ orderId: ORDER, status: 'completed' });
      expect(calls.slice(0, 6)).to.deep.equal([
        'admitAndSubmit',
        'screenPayment',
        'concludeReview',
        'monitorOrder',
        'checkLimits',
        'holdFunds',
      ]);
      expect(calls).to.include('settlePayment');
    });
  });

  describe('when the order is held for review and the SLA runs out on a confirmed match', () => {
    it('then the recorded decision is read at the timer and the order is rejected before any hold', async () => {
      let calls: string[] = [];
      const held = happy({
        admitPayment: () => ({ admitted: 'screening_review' }),
        screenPayment: () => ({ blocked: false, review: { hitId: 'hit-1', reviewSlaMs: 60_000 } }),
        concludeReview: () => ({ status: 'confirmed' }),
      });
      const result = await payment(held, { reviewSlaMs: 50 }, async (run) => {
        await run.result;
        calls = run.calls;
      });
      expect(result).to.deep.equal({ orderId: ORDER, status: 'rejected', failureCode: 'blocked_by_compliance' });
      expect(calls).to.deep.equal(['admitAndSubmit', 'screenPayment', 'concludeReview']);
    });
  });

  describe('when admission finds monitoring holds the screened order for review and staff clear it', () => {
    it('then the order waits for that decision, then its limits are checked and the amount held one step at a time', async () => {
      let calls: string[] = [];
      const held = happy({ admitPayment: () => ({ admitted: 'monitoring_review', reviewSlaMs: 60_000 }) });
      const result = await payment(held, {}, async (run) => {
        await untilStage(run.handle, 'awaiting_review');
        await run.handle.signal(screeningDecisionSignal, { decision: 'cleared' });
        await run.result;
        calls = run.calls;
      });
      expect(result).to.deep.equal({ orderId: ORDER, status: 'completed' });
      expect(calls.slice(0, 5)).to.deep.equal(['admitAndSubmit', 'concludeReview', 'checkLimits', 'holdFunds', 'submitToRail']);
    });

    it('then a confirmation rejects the order before its limits and any hold', async () => {
      let calls: string[] = [];
      const held = happy({
        admitPayment: () => ({ admitted: 'monitoring_review', reviewSlaMs: 60_000 }),
        concludeReview: () => ({ status: 'confirmed' }),
      });
      const result = await payment(held, { reviewSlaMs: 50 }, async (run) => {
        await run.result;
        calls = run.calls;
      });
      expect(result).to.deep.equal({ orderId: ORDER, status: 'rejected', failureCode: 'blocked_by_compliance' });
      expect(calls).to.deep.equal(['admitAndSubmit', 'concludeReview']);
    });
  });

  describe('when monitoring refuses the order after screening’s review was cleared', () => {
    it('then it is rejected with blocked_by_compliance before the limits and any hold', async () => {
      let calls: string[] = [];
      const held = happy({
        admitPayment: () => ({ admitted: 'screening_review' }),
        screenPayment: () => ({ blocked: false, review: { hitId: 'hit-1', reviewSlaMs: 60_000 } }),
        monitorOrder: () => ({ refused: true }),
      });
      const result = await payment(held, { reviewSlaMs: 50 }, async (run) => {
        await run.result;
        calls = run.calls;
      });
      expect(result).to.deep.equal({ orderId: ORDER, status: 'rejected', failureCode: 'blocked_by_compliance' });
      expect(calls).to.deep.equal(['admitAndSubmit', 'screenPayment', 'concludeReview', 'monitorOrder']);
    });
  });

  describe('when screening’s review was cleared and monitoring holds the order for a review of its own', () => {
    it('then the order waits again for that decision, and its confirmation rejects it before any hold', async () => {
      let calls: string[] = [];
      let concluded = 0;
      const held = happy({
        admitPayment: () => ({ admitted: 'screening_review' }),
        screenPayment: () => ({ blocked: false, review: { hitId: 'hit-1', reviewSlaMs: 60_000 } }),
        monitorOrder: () => ({ refused: false, review: { hitId: 'hit-2', reviewSlaMs: 60_000 } }),
        concludeReview: () => ({ status: (concluded += 1) === 1 ? 'cleared' : 'confirmed' }),
      });
      const result = await payment(held, {}, async (run) => {
        await untilStage(run.handle, 'awaiting_review');
        await run.handle.signal(screeningDecisionSignal, { decision: 'cleared' });
        while (!run.calls.includes('monitorOrder')) await new Promise((r) => setTimeout(r, 20));
        await untilStage(run.handle, 'awaiting_review');
        await run.handle.signal(screeningDecisionSignal, { decision: 'confirmed' });
        await run.result;
        calls = run.calls;
      });
      expect(result).to.deep.equal({ orderId: ORDER, status: 'rejected', failureCode: 'blocked_by_compliance' });
      expect(calls).to.deep.equal(['admitAndSubmit', 'screenPayment', 'concludeReview', 'monitorOrder', 'concludeReview']);
    });
  });

  describe('when a payment cleared after a monitoring review breaches the payer’s KYC limits', () => {
    it('then the order is rejected with the breach’s code and nothing is held', async () => {
      let calls: string[] = [];
      const breach = { code: 'limit_exceeded', reason: 'over the daily limit' };
      const reviewed = happy({ admitPayment: () => ({ admitted: 'monitoring_review', reviewSlaMs: 50 }), checkLimits: () => breach });
      const result = await payment(reviewed, { reviewSlaMs: 50 }, async (run) => {
        await run.result;
        calls = run.calls;
        expect(run.argOf('rejectOrder')).to.deep.equal({ orderId: ORDER, failureCode: 'limit_exceeded', reason: 'over the daily limit' });
      });
      expect(result).to.deep.equal({ orderId: ORDER, status: 'rejected', failureCode: 'limit_exceeded' });
      expect(calls).to.deep.equal(['admitAndSubmit', 'concludeReview', 'checkLimits', 'rejectOrder']);
    });
  });

  describe('when the wallet cannot cover the hold', () => {
    it('then the order fails with insufficient_funds, with nothing to give back', async () => {
      let calls: string[] = [];
      const refused = () => {
        throw ApplicationFailure.nonRetryable('the wallet cannot cover this payment', INSUFFICIENT_FUNDS, {
          failureCode: 'insufficient_funds',
        });
      };
      const result = await payment(
        happy({ admitPayment: () => ({ admitted: 'screening_review' }), holdFunds: refused }),
        {},
        async (run) => {
          await run.result;
          calls = run.calls;
          expect(run.argOf('failOrder')).to.include({ failureCode: 'insufficient_funds' });
        },
      );
      expect(result).to.deep.equal({ orderId: ORDER, status: 'failed', failureCode: 'insufficient_funds' });
      expect(calls).to.deep.equal(['admitAndSubmit', 'screenPayment', 'monitorOrder', 'checkLimits', 'holdFunds', 'failOrder']);
    });

    it('then, admitted in one step, the order fails with insufficient_funds the same way', async () => {
      let calls: string[] = [];
      const unheld = { admitted: 'unheld', failureCode: 'insufficient_funds', reason: 'the wallet cannot cover this payment' };
      const result = await payment(happy({ admitPayment: () => unheld }), {}, async (run) => {
        await run.result;
        calls = run.calls;
        expect(run.argOf('failOrder')).to.deep.equal({ orderId: ORDER, failureCode: 'insufficient_funds', reason: unheld.reason });
      });
      expect(result).to.deep.equal({ orderId: ORDER, status: 'failed', failureCode: 'insufficient_funds' });
      expect(calls).to.deep.equal(['admitAndSubmit', 'failOrder']);
    });
  });

  describe('when admission fails inside the rail activity (its answer `by_steps`)', () => {
    it('then the workflow admits one step at a time, submits on its own, and the payment settles', async () => {
      let calls: string[] = [];
      const result = await payment(happy({ admitAndSubmit: () => ({ admitted: 'by_steps' }) }), {}, async (run) => {
        await run.result;
        calls = run.calls;
      });
      expect(result).to.deep.equal({ orderId: ORDER, status: 'completed' });
      expect(calls).to.deep.equal([
        'admitAndSubmit',
        'screenPayment',
        'monitorOrder',
        'checkLimits',
        'holdFunds',
        'submitToRail',
        'pollRail',
        'settlePayment',
      ]);
    });
  });

  describe('when the rail refuses the transfer', () => {
    it('then the hold is released and the order fails with the rail’s code, once, without retrying', async () => {
      let calls: string[] = [];
      const refused = () => {
        throw ApplicationFailure.create({ message: 'no such account', type: RAIL_REJECTED, details: [{ failureCode: 'invalid_account' }] });
      };
      const result = await payment(happy({ submitToRail: refused }), {}, async (run) => {
        await run.result;
        calls = run.calls;
      });
      expect(result).to.deep.equal({ orderId: ORDER, status: 'failed', failureCode: 'invalid_account' });
      expect(calls).to.deep.equal(['admitAndSubmit', 'releaseHold', 'failOrder']);
    });
  });

  describe('when the rail settles the transfer', () => {
    it('then the hold is settled and the order completes', async () => {
      let calls: string[] = [];
      const result = await payment(happy(), {}, async (run) => {
        await run.result;
        calls = run.calls;
        expect(run.argOf('settlePayment')).to.deep.equal({ orderId: ORDER, reference: REFERENCE });
      });
      expect(result).to.deep.equal({ orderId: ORDER, status: 'completed' });
      expect(calls).to.deep.equal(['admitAndSubmit', 'pollRail', 'settlePayment']);
    });
  });

  describe('when a payment is started for admission with the submission (`admitWithSubmission`, as every start of today)', () => {
    /** A run's history once it has closed, and how many patch markers it holds. */
    const closed = async (run: Run<PaymentResult>): Promise<{ history: temporal.api.history.v1.IHistory; patches: number }> => {
      await run.result;
      const history = await run.handle.fetchHistory();
      return {
        history,
        patches: (history.events ?? []).filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch').length,
      };
    };

    it('then it admits and submits in the one rail activity, records no patch marker, and replays so', async () => {
      let calls: string[] = [];
      let ended: Awaited<ReturnType<typeof closed>> | undefined;
      const result = await payment(happy(), { admitWithSubmission: true }, async (run) => {
        ended = await closed(run);
        calls = run.calls;
      });
      expect(result).to.deep.equal({ orderId: ORDER, status: 'completed' });
      expect(calls).to.deep.equal(['admitAndSubmit', 'pollRail', 'settlePayment']);
      expect(ended?.patches).to.equal(0);
      // Replaying, it asks the patch, finds no marker, and takes the same steps all the same.
      await Worker.runReplayHistory(
        { workflowsPath: require.resolve('../../workflows') },
        ended?.history ?? {},
        'replay-admit-with-submission',
      );
    });

    it('then a run started without it (before it, or on appeal) asks the `admit-with-submission` patch and takes the same steps', async () => {
      let calls: string[] = [];
      let ended: Awaited<ReturnType<typeof closed>> | undefined;
      const result = await payment(happy(), {}, async (run) => {
        ended = await closed(run);
        calls = run.calls;
      });
      expect(result).to.deep.equal({ orderId: ORDER, status: 'completed' });
      expect(calls).to.deep.equal(['admitAndSubmit', 'pollRail', 'settlePayment']);
      expect(ended?.patches).to.equal(1);
    });
  });

  describe('when a payment started as the api starts it (`processingWhenSeen`) has its rail’s answer with the submission’s result', () => {
    const today: Partial<PaymentWorkflowInput> = { admitWithSubmission: true, processingWhenSeen: true };

    const SETTLED: RailOutcomeSignal = { state: 'succeeded', reference: 'FROM-CALLBACK' };
    const replays = (history: temporal.api.history.v1.IHistory, name: string) =>
      Worker.runReplayHistory({ workflowsPath: require.resolve('../../workflows') }, history, name);

    it('then it settles in that workflow task and upserts `PaygateStatus` once, `completed`, and replays so', async () => {
      const ran = await callbackFirst(SETTLED, today);
      expect(ran.result).to.deep.equal({ orderId: ORDER, status: 'completed' });
      expect(ran.calls).to.deep.equal(['admitAndSubmit', 'settlePayment']);
      expect(ran.statuses).to.deep.equal(['completed']);
      await replays(ran.history, 'replay-processing-unseen');
    });

    it('then, when the settlement’s first attempt fails, `processing` is upserted before it retries, and the order completes', async () => {
      let attempts = 0;
      const settlePayment = () => {
        attempts += 1;
        if (attempts === 1) throw new Error('the database is unreachable');
        return undefined;
      };
      const ran = await callbackFirst(SETTLED, today, { settlePayment });
      expect(ran.result).to.deep.equal({ orderId: ORDER, status: 'completed' });
      expect(attempts).to.equal(2);
      expect(ran.statuses).to.deep.equal(['processing', 'completed']);
      await replays(ran.history, 'replay-processing-retried');
    });

    it('then, when the rail says the transfer failed, `processing` is upserted before the hold is given back', async () => {
      const failed: RailOutcomeSignal = {
        state: 'failed',
        reference: 'FROM-CALLBACK',
        failureCode: 'recipient_invalid',
        reason: 'no such account',
      };
      const ran = await callbackFirst(failed, today);
      expect(ran.result).to.deep.equal({ orderId: ORDER, status: 'failed', failureCode: 'recipient_invalid' });
      expect(ran.calls).to.deep.equal(['admitAndSubmit', 'releaseHold', 'failOrder']);
      expect(ran.statuses).to.deep.equal(['processing', 'failed']);
    });

    it('then a run started without it (before it) upserts `processing` as soon as the order is held, as it always did', async () => {
      const ran = await callbackFirst(SETTLED, { admitWithSubmission: true });
      expect(ran.result).to.deep.equal({ orderId: ORDER, status: 'completed' });
      expect(ran.statuses).to.deep.equal(['processing', 'completed']);
    });
  });

  describe('when a payment started as the api starts it waits for its rail’s answer', () => {
    it('then `processing` is upserted while it waits, and `completed` once the callback settles it', async () => {
      let seen: Awaited<ReturnType<typeof statusesOf>> | undefined;
      const result = await trackedPayment(
        happy(),
        { admitWithSubmission: true, processingWhenSeen: true, pollAfterMs: 60_000 },
        async (run) => {
          await untilStage(run.handle, 'awaiting_outcome');
          await run.handle.signal(railOutcomeSignal, { state: 'succeeded', reference: 'FROM-CALLBACK' });
          seen = await statusesOf(run);
        },
      );
      expect(result).to.deep.equal({ orderId: ORDER, status: 'completed' });
      expect(seen?.statuses).to.deep.equal(['processing', 'completed']);
    });
  });

  describe('when admission answered the order’s ledger accounts', () => {
    it('then settlement posts on them, without reading the order again', async () => {
      const accounts = { orderId: ORDER, userId: 'payer-1', method: 'mobile_money', currency: 'KES', amountMinor: '150000', feeMinor: '0' };
      const result = await payment(happy({ admitPayment: () => ({ admitted: 'held', accounts }) }), {}, async (run) => {
        await run.result;
        expect(run.argOf('settlePayment')).to.deep.equal({ orderId: ORDER, reference: REFERENCE, accounts });
      });
      expect(result).to.deep.equal({ orderId: ORDER, status: 'completed' });
    });
  });

  describe('when the rail says the transfer failed', () => {
    it('then the hold is released and the order fails with the rail’s code', async () => {
      let calls: string[] = [];
      const failed = () => ({ state: 'failed', reference: REFERENCE, failureCode: 'insufficient_funds', reason: 'the provider refused' });
      const result = await payment(happy({ pollRail: failed }), {}, async (run) => {
        await run.result;
        calls = run.calls;
      });
      expect(result).to.deep.equal({ orderId: ORDER, status: 'failed', failureCode: 'insufficient_funds' });
      expect(calls.slice(-3)).to.deep.equal(['pollRail', 'releaseHold', 'failOrder']);
      expect(calls).to.not.include('settlePayment');
    });
  });

  describe('when the rail’s callback arrives before the first poll', () => {
    it('then the callback settles the payment and the rail is never polled', async () => {
      let calls: string[] = [];
      const result = await payment(happy(), { pollAfterMs: 60_000 }, async (run) => {
        await untilStage(run.handle, 'awaiting_outcome');
        await run.handle.signal(railOutcomeSignal, { state: 'succeeded', reference: 'FROM-CALLBACK' });
        await run.result;
        calls = run.calls;
        expect(run.argOf('settlePayment')).to.deep.equal({ orderId: ORDER, reference: 'FROM-CALLBACK' });
      });
      expect(result).to.deep.equal({ orderId: ORDER, status: 'completed' });
      expect(calls).to.not.include('pollRail');
    });
  });

  describe('when the rail answers a poll before its callback arrives', () => {
    it('then the polled answer settles the payment after the pending polls, and a late callback changes nothing', async () => {
      let polls = 0;
      let calls: string[] = [];
      const pollRail = () =>
        ++polls < 3
          ? { state: 'pending', reference: REFERENCE }
          : { state: 'failed', reference: REFERENCE, failureCode: 'rail_error', reason: 'x' };
      const result = await payment(happy({ pollRail }), {}, async (run) => {
        await run.result;
        calls = run.calls;
        await run.handle.signal(railOutcomeSignal, { state: 'succeeded', reference: REFERENCE }).catch(() => undefined);
      });
      expect(result).to.deep.equal({ orderId: ORDER, status: 'failed', failureCode: 'rail_error' });
      expect(polls).to.equal(3);
      expect(calls.filter((c) => c === 'pollRail')).to.have.length(3);
      expect(calls).to.not.include('settlePayment');
    });
  });

  describe('when the settle deadline passes with the rail still pending', () => {
    it('then the order is flagged overdue once, keeps its hold, and settles when the rail answers', async () => {
      let polls = 0;
      let calls: string[] = [];
      const pollRail = () => (++polls < 4 ? { state: 'pending', reference: REFERENCE } : { state: 'succeeded', reference: REFERENCE });
      const result = await payment(happy({ pollRail }), { settleTimeoutMs: 40 }, async (run) => {
        await run.result;
        calls = run.calls;
      });
      expect(result).to.deep.equal({ orderId: ORDER, status: 'completed' });
      expect(calls.filter((c) => c === 'flagOverdue')).to.have.length(1);
      expect(calls).to.not.include('releaseHold');
      expect(calls.at(-1)).to.equal('settlePayment');
    });
  });
  describe('when the submission’s answer is lost after a request left (retries exhausted, timeouts)', () => {
    it('then the hold is kept, the rail is asked, and its answer settles the order', async () => {
      let calls: string[] = [];
      const lost = () => {
        throw ApplicationFailure.nonRetryable('Jenga did not answer: socket hang up', RAIL_UNAVAILABLE, {
          failureCode: 'provider_unavailable',
        });
      };
      const result = await payment(happy({ submitToRail: lost, railSubmissionOf: () => 'unknown' }), {}, async (run) => {
        await run.result;
        calls = run.calls;
        expect(run.argOf('settlePayment')).to.deep.equal({ orderId: ORDER, reference: REFERENCE });
      });
      expect(result).to.deep.equal({ orderId: ORDER, status: 'completed' });
      expect(calls).to.deep.equal(['admitAndSubmit', 'railSubmissionOf', 'noteOutcomeUnknown', 'pollRail', 'settlePayment']);
    });

    it('then a failure the rail answers later is the one that releases the hold', async () => {
      let calls: string[] = [];
      const lost = () => {
        throw ApplicationFailure.nonRetryable('timed out', RAIL_UNAVAILABLE, { failureCode: 'provider_unavailable' });
      };
      const failed = () => ({ state: 'failed', reference: REFERENCE, failureCode: 'account_not_found', reason: 'no such account' });
      const result = await payment(happy({ submitToRail: lost, railSubmissionOf: () => 'unknown', pollRail: failed }), {}, async (run) => {
        await run.result;
        calls = run.calls;
      });
      expect(result).to.deep.equal({ orderId: ORDER, status: 'failed', failureCode: 'account_not_found' });
      expect(calls.slice(-3)).to.deep.equal(['pollRail', 'releaseHold', 'failOrder']);
    });
  });

  describe('when the rail refuses a resubmission as a duplicate', () => {
    it('then the rail is asked without reading the submission state, and the order settles', async () => {
      let calls: string[] = [];
      const duplicate = () => {
        throw ApplicationFailure.nonRetryable('Jenga already has this transfer', RAIL_OUTCOME_UNKNOWN, {
          failureCode: 'duplicate_request',
        });
      };
      const result = await payment(happy({ submitToRail: duplicate }), {}, async (run) => {
        await run.result;
        calls = run.calls;
      });
      expect(result).to.deep.equal({ orderId: ORDER, status: 'completed' });
      expect(calls).to.include('noteOutcomeUnknown');
      expect(calls).to.not.include('railSubmissionOf');
      expect(calls).to.not.include('releaseHold');
    });
  });

  describe('when every submission was refused before the rail took it (maintenance, busy)', () => {
    it('then the hold is released and the order fails, without asking the rail', async () => {
      let calls: string[] = [];
      const busy = () => {
        throw ApplicationFailure.nonRetryable('in maintenance', RAIL_UNAVAILABLE, { failureCode: 'exchange_unavailable' });
      };
      const result = await payment(happy({ submitToRail: busy, railSubmissionOf: () => 'refused' }), {}, async (run) => {
        await run.result;
        calls = run.calls;
      });
      expect(result).to.deep.equal({ orderId: ORDER, status: 'failed', failureCode: 'exchange_unavailable' });
      expect(calls.slice(-3)).to.deep.equal(['railSubmissionOf', 'releaseHold', 'failOrder']);
      expect(calls).to.not.include('pollRail');
    });
  });

  describe('when asking the rail fails, even after its retries', () => {
    it('then the order keeps waiting and asks again, and the next answer settles it', async () => {
      let polls = 0;
      const pollRail = () => {
        if (++polls < 3)
          throw ApplicationFailure.nonRetryable('the status query failed', RAIL_UNAVAILABLE, { failureCode: 'provider_unavailable' });
        return { state: 'succeeded', reference: REFERENCE };
      };
      const result = await payment(happy({ pollRail }), {}, async (run) => {
        await run.result;
        expect(run.calls).to.not.include('releaseHold');
      });
      expect(result).to.deep.equal({ orderId: ORDER, status: 'completed' });
      expect(polls).to.equal(3);
    });
  });
});
