import { patched, proxyLocalActivities } from '@temporalio/workflow';
import type { PaymentActivities } from './activities';
import type { P2pActivities } from './activities/p2p';
import { LOCAL_DB_STEP } from './presets';
import { admitOrder, orderRun } from './admission';
import type { PaymentResult, TradeWorkflowInput } from './shared';

/** Every step of a trade is one short transaction in our own Postgres: local activities. */
const db = proxyLocalActivities<PaymentActivities>(LOCAL_DB_STEP);
const p2p = proxyLocalActivities<P2pActivities>(LOCAL_DB_STEP);

/**
 * A P2P trade (workflow id `trade-<order_id>`): screened and limit-checked like a payment, then both legs
 * settle between wallets in one database step, with no hold and no rail (the README's *P2P trading and appeals*). A
 * taker's wallet that cannot pay fails the order here (nothing moved); an ad that no longer fits rejects it.
 */
export async function trade(input: TradeWorkflowInput): Promise<PaymentResult> {
  const { orderId } = input;
  const run = orderRun();
  // Patches are asked before the first step (see MonitoringPatch); a trade from before asks its own after screening.
  const refused = await admitOrder(orderId, run, input.reviewSlaMs, patched('patches-first') ? 'on' : 'ask');
  if (refused) return refused;

  run.stage = 'posting';
  run.report('processing');
  const settled = await p2p.settleWalletTrade({ orderId });
  let result: PaymentResult;
  if (settled.status === 'failed') {
    const failureCode = settled.failureCode ?? 'insufficient_funds';
    await db.failOrder({ orderId, failureCode, reason: settled.reason ?? 'the trade could not settle' });
    result = { orderId, status: 'failed', failureCode };
  } else {
    result =
      settled.status === 'completed' ? { orderId, status: 'completed' } : { orderId, status: 'rejected', failureCode: settled.failureCode };
  }
  run.report(result.status);
  run.stage = 'done';
  return result;
}
