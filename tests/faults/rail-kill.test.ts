import { expect } from 'chai';
import { auditPayments, awaitTerminal, duplicateCount } from './support/audit';
import { initiatePayment, newCustomer } from './support/client';
import { query } from './support/db';
import { Deployment, type PaygateProcess } from './support/paygate';
import { score } from './support/scoreboard';
import { until } from './support/wait';
import { faultStack } from './setup';
import { startRailFakes, type RailFakes } from '../fakes/rails';

/**
 * The worker is killed between send and record (docs/payments.md#unknown-outcomes): a bank transfer on the
 * real Jenga connector against its fake, which executes the transfer and holds its answer until the test has
 * SIGKILLed the worker, so the kill lands exactly after the bank has the money and before Paygate recorded
 * the answer. The restarted worker sends the same reference again; the bank makes one transfer, the hold
 * stays until the definite answer, and the order settles once.
 */

interface Ledger {
  kind: string;
}

const ledgerOf = async (orderId: string): Promise<string[]> =>
  (await query<Ledger>('SELECT kind FROM ledger_transactions WHERE order_id = $1 ORDER BY created_at', [orderId])).map((l) => l.kind);

describe('faults: the Temporal worker is SIGKILLed between sending a payout to the bank and recording its answer', () => {
  let fakes: RailFakes;
  let funding: Deployment;
  let deployment: Deployment;
  let api: PaygateProcess;
  let worker: PaygateProcess;

  before(async function () {
    this.timeout(180_000);
    fakes = await startRailFakes();
    // Customers are funded through a sandbox deployment's simulator on the same database: a deployment on
    // real rails has none.
    funding = new Deployment('rail-kill-funding', faultStack.infra);
    deployment = new Deployment('rail-kill', faultStack.infra, {
      ...fakes.env,
      PAYMENT_POLL_AFTER_MS: '500',
      PAYMENT_POLL_MAX_INTERVAL_MS: '1000',
    });
    api = await deployment.startApi();
    worker = await deployment.startWorker(api);
    await funding.startApi();
  });
  after(async function () {
    this.timeout(60_000);
    fakes.jenga.holdAnswer = undefined;
    await Promise.all([deployment?.stopAll(), funding?.stopAll()]);
    await fakes?.close();
  });

  const cases = [
    { label: 'the bank answers the resent reference as the same transfer', refuseDuplicates: false },
    { label: 'the bank refuses the resent reference as a duplicate', refuseDuplicates: true },
  ];

  for (const c of cases) {
    it(`when the bank has executed the transfer and the worker dies before recording it, and ${c.label}, then the bank makes one transfer, the hold stays until the answer, and the order settles once`, async function () {
      this.timeout(180_000);
      const customer = await newCustomer(funding.processes[0].baseUrl);
      const account = `55${String(Date.now()).slice(-8)}`;
      let executed: (reference: string) => void = () => undefined;
      const atTheBank = new Promise<string>((resolve) => (executed = resolve));
      let answer: () => void = () => undefined;
      fakes.jenga.holdAnswer = (reference) => {
        executed(reference);
        return new Promise<void>((resolve) => (answer = resolve));
      };
      fakes.jenga.faults.refuseDuplicates = c.refuseDuplicates;
      try {
        const attempt = await initiatePayment(api.baseUrl, customer, {
          amount: '2500.00',
          currency: 'KES',
          method: 'bank_transfer',
          destination: { bank_code: '01', account_number: account, account_name: 'Amani Otieno' },
        });
        expect(attempt.answer?.status, JSON.stringify(attempt.answer?.body)).to.equal(202);
        const orderId = attempt.orderId!;

        // The bank has the transfer; Paygate has recorded only that it is sending it.
        const reference = await atTheBank;
        fakes.jenga.holdAnswer = undefined;
        const [sending] = await query<{ status: string; rail_submission: string | null; rail_client_reference: string | null }>(
          'SELECT status, rail_submission, rail_client_reference FROM orders WHERE id = $1',
          [orderId],
        );
        expect(sending).to.deep.equal({ status: 'processing', rail_submission: 'sending', rail_client_reference: reference });

        await worker.kill();
        // The answer leaves for a worker that is gone.
        answer();
        expect(await ledgerOf(orderId)).to.deep.equal(['hold']);
        expect((await query<{ status: string }>('SELECT status FROM orders WHERE id = $1', [orderId]))[0].status).to.equal('processing');

        await worker.start();
        // Until the bank's definite answer is recorded the order keeps its hold, and nothing is given back.
        await until(
          `order ${orderId} to leave processing`,
          async () => {
            const kinds = await ledgerOf(orderId);
            expect(kinds, 'postings while the outcome is unknown').to.not.include('release');
            const [order] = await query<{ status: string }>('SELECT status FROM orders WHERE id = $1', [orderId]);
            return order.status === 'processing' ? undefined : order.status;
          },
          90_000,
          200,
        );
        expect(await awaitTerminal([orderId], 1000)).to.deep.equal([]);

        const transfers = [...fakes.jenga.transfers.values()].filter((t) => t.body.destination.accountNumber === account);
        const audit = await auditPayments([attempt], {
          customerIds: [customer.userId],
          temporalAddress: faultStack.temporal.address,
          taskQueue: deployment.taskQueue,
        });
        const [order] = audit.orders;
        score({
          scenario: `worker SIGKILL between send and record (Jenga${c.refuseDuplicates ? ', duplicate refused' : ''})`,
          injected: 1,
          recovered: audit.completed,
          requests: audit.requests,
          lost: audit.lost.length,
          duplicates: duplicateCount(audit) + Math.max(0, transfers.length - 1),
          note: `bank transfers for the order: ${transfers.length}; events: ${Object.keys(order.events).join(', ')}`,
        });

        expect(transfers, 'transfers at the bank').to.have.length(1);
        expect(order.status).to.equal('completed');
        expect(order.ledger).to.deep.equal({ hold: 1, settle: 1 });
        expect(order.unbalancedTransactions).to.equal(0);
        expect(order.events).to.not.have.property('failed');
        expect(order.events.completed).to.equal(1);
        expect(order.workflowRuns).to.equal(1);
        const [settled] = await query<{ rail_reference: string | null }>('SELECT rail_reference FROM orders WHERE id = $1', [orderId]);
        expect(settled.rail_reference).to.equal(reference);
        expect(worker.unexpectedExits + api.unexpectedExits, 'processes that died on their own').to.equal(0);
      } finally {
        fakes.jenga.holdAnswer = undefined;
        fakes.jenga.faults.refuseDuplicates = false;
      }
    });
  }
});
