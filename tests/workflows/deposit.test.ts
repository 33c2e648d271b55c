import { ApplicationFailure } from '@temporalio/common';
import { expect } from 'chai';
import { RAIL_REJECTED } from '../../workflows/failure-types';
import { railOutcomeSignal, type DepositResult, type DepositWorkflowInput } from '../../workflows/shared';
import { prepareWorkflows, runWorkflow, type Mock, type Run } from './harness';

const DEPOSIT = 'deposit-under-test';
const REFERENCE = 'ws_CO_1';

/** Activities of a collection the payer pays: the prompt is sent, and the STK query says it was paid. */
const paid = (over: Record<string, Mock> = {}): Record<string, Mock> => ({
  requestCollection: () => ({ reference: REFERENCE }),
  pollCollection: () => ({ state: 'succeeded', reference: REFERENCE }),
  creditDeposit: () => undefined,
  failDeposit: () => undefined,
  ...over,
});

const deposit = (
  activities: Record<string, Mock>,
  over: Partial<DepositWorkflowInput> = {},
  body?: (run: Run<DepositResult>) => Promise<void>,
) =>
  runWorkflow<DepositResult>(
    'deposit',
    [{ depositId: DEPOSIT, pollAfterMs: 10, settleTimeoutMs: 60_000, maxPollIntervalMs: 20, ...over }],
    activities,
    body,
  );

describe('workflow unit: deposit', function () {
  this.timeout(60_000);
  before(async function () {
    this.timeout(120_000);
    await prepareWorkflows();
  });

  describe('when the payer pays and the callback says so', () => {
    it('then the wallet is credited with the callback’s reference, without polling', async () => {
      let calls: string[] = [];
      const result = await deposit(paid(), { pollAfterMs: 60_000 }, async (run) => {
        while (!run.calls.includes('requestCollection')) await new Promise((r) => setTimeout(r, 20));
        await run.handle.signal(railOutcomeSignal, { state: 'succeeded', reference: 'FROM-CALLBACK' });
        await run.result;
        calls = run.calls;
        expect(run.argOf('creditDeposit')).to.deep.equal({ depositId: DEPOSIT, reference: 'FROM-CALLBACK' });
      });
      expect(result).to.deep.equal({ depositId: DEPOSIT, status: 'completed' });
      expect(calls).to.deep.equal(['requestCollection', 'creditDeposit']);
    });
  });

  describe('when the payer pays and only the STK query says so', () => {
    it('then the wallet is credited after the poll', async () => {
      let calls: string[] = [];
      const result = await deposit(paid(), {}, async (run) => {
        await run.result;
        calls = run.calls;
      });
      expect(result).to.deep.equal({ depositId: DEPOSIT, status: 'completed' });
      expect(calls).to.deep.equal(['requestCollection', 'pollCollection', 'creditDeposit']);
    });
  });

  describe('when the rail refuses the prompt', () => {
    it('then the deposit fails with the rail’s code and nothing is credited', async () => {
      let calls: string[] = [];
      const refused = () => {
        throw ApplicationFailure.create({
          message: 'invalid phone',
          type: RAIL_REJECTED,
          details: [{ failureCode: 'invalid_destination' }],
        });
      };
      const result = await deposit(paid({ requestCollection: refused }), {}, async (run) => {
        await run.result;
        calls = run.calls;
      });
      expect(result).to.deep.equal({ depositId: DEPOSIT, status: 'failed', failureCode: 'invalid_destination' });
      expect(calls).to.deep.equal(['requestCollection', 'failDeposit']);
    });
  });

  describe('when the payer cancels the prompt', () => {
    it('then the deposit fails with the rail’s code', async () => {
      const cancelled = () => ({ state: 'failed', reference: REFERENCE, failureCode: 'cancelled_by_user', reason: 'cancelled' });
      const result = await deposit(paid({ pollCollection: cancelled }));
      expect(result).to.deep.equal({ depositId: DEPOSIT, status: 'failed', failureCode: 'cancelled_by_user' });
    });
  });

  describe('when the payer never answers by the settle deadline', () => {
    it('then the deposit fails with rail_timeout and nothing is credited', async () => {
      let calls: string[] = [];
      const pending = () => ({ state: 'pending', reference: REFERENCE });
      const result = await deposit(paid({ pollCollection: pending }), { settleTimeoutMs: 60 }, async (run) => {
        await run.result;
        calls = run.calls;
        expect(run.argOf('failDeposit')).to.include({ depositId: DEPOSIT, failureCode: 'rail_timeout' });
      });
      expect(result).to.deep.equal({ depositId: DEPOSIT, status: 'failed', failureCode: 'rail_timeout' });
      expect(calls).to.not.include('creditDeposit');
    });
  });
});
