import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { database } from '../platform/database';
import { temporalClient } from '../platform/temporal';
import { paymentWorkflowId } from '../workflows/shared';
import { initiate, mpesaPayment, newUser, waitForOrder } from './support/api';
import { ledgerKindsOf, rows } from './support/db';
import { mobileMoneyTransfersOf } from './support/rails';

/**
 * The activities a payment's workflow scheduled on the task queue, in order, its local activities' markers, and
 * its patch markers and search-attribute upserts, once the run has closed: the settlement's commit shows the order
 * completed before the workflow task that records its marker does.
 */
async function stepsOf(orderId: string): Promise<{ activities: string[]; localActivities: number; patches: number; upserted: string[] }> {
  const handle = temporalClient().workflow.getHandle(paymentWorkflowId(orderId));
  await handle.result();
  const history = await handle.fetchHistory();
  const events = history.events ?? [];
  return {
    activities: events.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []),
    localActivities: events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity').length,
    patches: events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch').length,
    upserted: events.flatMap((e) => Object.keys(e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {})),
  };
}

/** Admission and the submission it ends with, as one rail activity (docs/payments.md#admission). */
describe('a payment admitted and submitted in one rail activity', () => {
  describe('when the payment is clear, within limits and covered', () => {
    it('then one activity admits, holds and submits it, only the settlement is a local activity, and no patch is asked', async () => {
      const user = await newUser();
      const res = await initiate(user, mpesaPayment());
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      const orderId = (res.body as { order_id: string }).order_id;
      const order = await waitForOrder(user, orderId);
      expect(order.status).to.equal('completed');
      expect(order.events.map((e) => e.status)).to.deep.equal(['screening', 'processing', 'completed']);
      expect(await mobileMoneyTransfersOf(orderId)).to.deep.equal([order.rail_reference]);
      expect(await ledgerKindsOf(orderId)).to.deep.equal(['hold', 'settle']);
      // Started for admission with the submission, the run asks no patch: only PaygateStatus is ever upserted (once
      // when the rail's callback came with the activity's result, else `processing` first: tests/workflows/payment.test.ts).
      const steps = await stepsOf(orderId);
      expect({ ...steps, upserted: [...new Set(steps.upserted)] }).to.deep.equal({
        activities: ['admitAndSubmit'],
        localActivities: 1,
        patches: 0,
        upserted: ['PaygateStatus'],
      });
      expect(steps.upserted.length).to.be.within(1, 2);
    });
  });

  describe('when admission fails inside the rail activity (a statement refused once)', () => {
    // The payer's first move to `screening` is refused by a trigger, once: a sequence counts, and nextval is not
    // undone with the statement it failed.
    const suffix = randomUUID().replace(/-/g, '').slice(0, 12);
    const [fn, seq, trigger] = [`test_refuse_once_${suffix}`, `test_refusals_${suffix}`, `test_refuse_screening_${suffix}`];
    let payer: Awaited<ReturnType<typeof newUser>>;

    before(async () => {
      payer = await newUser();
      await database().query(`CREATE SEQUENCE ${seq}`);
      await database().query(
        `CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN
           IF NEW.user_id = '${payer.id}' AND NEW.status = 'screening' AND OLD.status = 'pending' THEN
             IF nextval('${seq}') = 1 THEN
               RAISE EXCEPTION 'refused once by the test';
             END IF;
           END IF;
           RETURN NEW;
         END $$`,
      );
      await database().query(`CREATE TRIGGER ${trigger} BEFORE UPDATE ON orders FOR EACH ROW EXECUTE FUNCTION ${fn}()`);
    });

    after(async () => {
      await database().query(`DROP TRIGGER IF EXISTS ${trigger} ON orders`);
      await database().query(`DROP FUNCTION IF EXISTS ${fn}()`);
      await database().query(`DROP SEQUENCE IF EXISTS ${seq}`);
    });

    it('then nothing was submitted by it, the workflow admits one step at a time, submits on its own, and the payment completes once', async () => {
      const res = await initiate(payer, mpesaPayment());
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      const orderId = (res.body as { order_id: string }).order_id;
      const order = await waitForOrder(payer, orderId);
      expect(order.status).to.equal('completed');
      expect(order.events.map((e) => e.status)).to.deep.equal(['screening', 'processing', 'completed']);
      // Refused in the rail activity, then let through when screening ran on its own.
      expect(await rows(`SELECT last_value::int AS asked FROM ${seq}`)).to.deep.equal([{ asked: 2 }]);
      expect(await mobileMoneyTransfersOf(orderId)).to.deep.equal([order.rail_reference]);
      expect(await ledgerKindsOf(orderId)).to.deep.equal(['hold', 'settle']);
      const steps = await stepsOf(orderId);
      expect(steps.activities).to.deep.equal(['admitAndSubmit', 'submitToRail']);
      // Screening, monitoring, the limits and the hold one by one, then the settlement.
      expect(steps.localActivities).to.equal(5);
    });
  });
});
