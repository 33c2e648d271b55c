import { expect } from 'chai';
import { screeningDecisionSignal, type PaymentResult, type TradeWorkflowInput } from '../../workflows/shared';
import { prepareWorkflows, runWorkflow, untilStage, type Mock, type Run } from './harness';

const ORDER = 'trade-under-test';

/** Activities of a trade that goes through: screened clear, within limits, settled between the wallets. */
const settles = (over: Record<string, Mock> = {}): Record<string, Mock> => ({
  screenPayment: () => ({ blocked: false }),
  monitorOrder: () => ({ refused: false }),
  concludeReview: () => ({ status: 'cleared' }),
  checkLimits: () => null,
  rejectOrder: () => undefined,
  settleWalletTrade: () => ({ status: 'completed' }),
  failOrder: () => undefined,
  ...over,
});

const trade = (
  activities: Record<string, Mock>,
  over: Partial<TradeWorkflowInput> = {},
  body?: (run: Run<PaymentResult>) => Promise<void>,
) => runWorkflow<PaymentResult>('trade', [{ orderId: ORDER, reviewSlaMs: 60_000, ...over }], activities, body);

describe('workflow unit: trade', function () {
  this.timeout(60_000);
  before(async function () {
    this.timeout(120_000);
    await prepareWorkflows();
  });

  describe('when both legs settle between the wallets', () => {
    it('then the order completes in one settlement step, with no hold and no rail', async () => {
      let calls: string[] = [];
      const result = await trade(settles(), {}, async (run) => {
        await run.result;
        calls = run.calls;
      });
      expect(result).to.deep.equal({ orderId: ORDER, status: 'completed' });
      expect(calls).to.deep.equal(['screenPayment', 'monitorOrder', 'checkLimits', 'settleWalletTrade']);
    });
  });

  describe('when the taker’s wallet cannot pay for the trade', () => {
    it('then the order fails with insufficient_funds, recorded by the workflow', async () => {
      let calls: string[] = [];
      const short = () => ({ status: 'failed', failureCode: 'insufficient_funds', reason: "the taker's wallet cannot pay for this trade" });
      const result = await trade(settles({ settleWalletTrade: short }), {}, async (run) => {
        await run.result;
        calls = run.calls;
        expect(run.argOf('failOrder')).to.deep.equal({
          orderId: ORDER,
          failureCode: 'insufficient_funds',
          reason: "the taker's wallet cannot pay for this trade",
        });
      });
      expect(result).to.deep.equal({ orderId: ORDER, status: 'failed', failureCode: 'insufficient_funds' });
      expect(calls).to.deep.equal(['screenPayment', 'monitorOrder', 'checkLimits', 'settleWalletTrade', 'failOrder']);
    });
  });

  describe('when the ad no longer fits the trade', () => {
    it('then the order is rejected with ad_unavailable, as the settlement step recorded it', async () => {
      let calls: string[] = [];
      const gone = () => ({ status: 'rejected', failureCode: 'ad_unavailable' });
      const result = await trade(settles({ settleWalletTrade: gone }), {}, async (run) => {
        await run.result;
        calls = run.calls;
      });
      expect(result).to.deep.equal({ orderId: ORDER, status: 'rejected', failureCode: 'ad_unavailable' });
      expect(calls).to.not.include('failOrder');
    });
  });

  describe('when screening rejects the trade', () => {
    it('then nothing settles', async () => {
      let calls: string[] = [];
      const result = await trade(settles({ screenPayment: () => ({ blocked: true }) }), {}, async (run) => {
        await run.result;
        calls = run.calls;
      });
      expect(result).to.deep.equal({ orderId: ORDER, status: 'rejected', failureCode: 'blocked_by_compliance' });
      expect(calls).to.deep.equal(['screenPayment']);
    });
  });

  describe('when the trade is held for review and staff clear it', () => {
    it('then the decision signal reaches the trade and it settles', async () => {
      const held = settles({ screenPayment: () => ({ blocked: false, review: { hitId: 'hit-1', reviewSlaMs: 60_000 } }) });
      const result = await trade(held, {}, async (run) => {
        await untilStage(run.handle, 'awaiting_review');
        await run.handle.signal(screeningDecisionSignal, { decision: 'cleared' });
      });
      expect(result).to.deep.equal({ orderId: ORDER, status: 'completed' });
    });
  });
});
