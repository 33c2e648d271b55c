import { expect } from 'chai';
import { auditPayments, awaitTerminal, duplicateCount } from './support/audit';
import { fundCrypto, initiatePayment, newCustomer, type Customer } from './support/client';
import { query } from './support/db';
import { Deployment, type PaygateProcess } from './support/paygate';
import { score } from './support/scoreboard';
import { until } from './support/wait';
import { faultStack } from './setup';
import { startRailFakes, type RailFakes } from '../fakes/rails';
import type { FakeFaults, HoldAnswer } from '../fakes/http';

/**
 * The worker is killed between send and record (docs/payments.md#unknown-outcomes), on each real connector
 * against its fake: a Jenga bank transfer, a Daraja B2C payout and a ccxt exchange withdrawal. The fake
 * executes the transfer and holds its answer (and any result it posts about it) until the test has
 * SIGKILLed the worker, so the kill lands exactly after the provider has the money and before Paygate
 * recorded the answer. The restarted worker sends the same reference again; the provider makes one
 * transfer, the hold stays until the definite answer, and the order settles once.
 */

interface Ledger {
  kind: string;
}

const ledgerOf = async (orderId: string): Promise<string[]> =>
  (await query<Ledger>('SELECT kind FROM ledger_transactions WHERE order_id = $1 ORDER BY created_at', [orderId])).map((l) => l.kind);

/** A real connector under test: its fake's switches, a payment to it, and the transfers its fake holds. */
interface Rail {
  name: string;
  /** Who holds the money, as the test names it. */
  provider: string;
  fake(fakes: RailFakes): { faults: FakeFaults; holdAnswer: HoldAnswer };
  /** A payment for the customer, with the mark that finds its transfers at the fake. */
  payment(customer: Customer, baseUrl: string): Promise<{ body: Record<string, unknown>; mark: string }>;
  /** The fake's transfers for the payment, each as the references the rail knows it by (its own id first). */
  transfers(fakes: RailFakes, mark: string, orderId: string): string[][];
}

const RAILS: Rail[] = [
  {
    name: 'Jenga',
    provider: 'the bank',
    fake: (fakes) => fakes.jenga,
    payment: () => {
      const account = `55${String(Date.now()).slice(-8)}`;
      return Promise.resolve({
        mark: account,
        body: {
          amount: '2500.00',
          currency: 'KES',
          method: 'bank_transfer',
          destination: { bank_code: '01', account_number: account, account_name: 'Amani Otieno' },
        },
      });
    },
    transfers: (fakes, account) =>
      [...fakes.jenga.transfers.values()]
        .filter((t) => t.body.destination.accountNumber === account)
        .map((t) => [t.body.transfer.reference]),
  },
  {
    name: 'Daraja B2C',
    provider: 'M-Pesa',
    fake: (fakes) => fakes.daraja,
    payment: () => {
      const phone = `25471${String(Date.now()).slice(-7)}`;
      return Promise.resolve({
        mark: phone,
        body: { amount: '1500.00', currency: 'KES', method: 'mobile_money', destination: { provider: 'mpesa', phone: `+${phone}` } },
      });
    },
    transfers: (fakes, phone, orderId) =>
      [...fakes.daraja.payouts.values()]
        .filter((p) => p.phone === phone || p.originator === orderId)
        .map((p) => [p.conversation, p.originator]),
  },
  {
    name: 'ccxt',
    provider: 'the exchange',
    fake: (fakes) => fakes.binance,
    payment: async (customer, baseUrl) => {
      await fundCrypto(baseUrl, customer, 'USDT', '100.000000');
      return {
        mark: customer.userId,
        body: {
          amount: '12.000000',
          currency: 'USDT',
          method: 'crypto',
          destination: { address: 'TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE', network: 'TRC20' },
        },
      };
    },
    transfers: (fakes, _mark, orderId) => fakes.binance.withdrawals.filter((w) => w.withdrawOrderId === orderId).map((w) => [w.id]),
  },
];

describe('faults: the Temporal worker is SIGKILLed between sending a payout to the rail and recording its answer', () => {
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
    for (const rail of RAILS) if (fakes) rail.fake(fakes).holdAnswer = undefined;
    await Promise.all([deployment?.stopAll(), funding?.stopAll()]);
    await fakes?.close();
  });

  const cases = [
    { label: 'answers the resent reference as the same transfer', refuseDuplicates: false },
    { label: 'refuses the resent reference as a duplicate', refuseDuplicates: true },
  ];

  for (const rail of RAILS) {
    for (const c of cases) {
      it(`when ${rail.provider} (${rail.name}) has executed the transfer and the worker dies before recording it, and ${rail.provider} ${c.label}, then it makes one transfer, the hold stays until the answer, and the order settles once`, async function () {
        this.timeout(180_000);
        const fake = rail.fake(fakes);
        const customer = await newCustomer(funding.processes[0].baseUrl);
        const { body, mark } = await rail.payment(customer, funding.processes[0].baseUrl);
        let executed: (reference: string) => void = () => undefined;
        const atTheRail = new Promise<string>((resolve) => (executed = resolve));
        let answer: () => void = () => undefined;
        fake.holdAnswer = (reference) => {
          executed(reference);
          return new Promise<void>((resolve) => (answer = resolve));
        };
        fake.faults.refuseDuplicates = c.refuseDuplicates;
        try {
          const attempt = await initiatePayment(api.baseUrl, customer, body);
          expect(attempt.answer?.status, JSON.stringify(attempt.answer?.body)).to.equal(202);
          const orderId = attempt.orderId!;

          // The rail has the transfer; Paygate has recorded only that it is sending it.
          const reference = await atTheRail;
          fake.holdAnswer = undefined;
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
          // Until the rail's definite answer is recorded the order keeps its hold, and nothing is given back.
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

          const transfers = rail.transfers(fakes, mark, orderId);
          const audit = await auditPayments([attempt], {
            customerIds: [customer.userId],
            temporalAddress: faultStack.temporal.address,
            taskQueue: deployment.taskQueue,
          });
          const [order] = audit.orders;
          score({
            scenario: `worker SIGKILL between send and record (${rail.name}${c.refuseDuplicates ? ', duplicate refused' : ''})`,
            injected: 1,
            recovered: audit.completed,
            requests: audit.requests,
            lost: audit.lost.length,
            duplicates: duplicateCount(audit) + Math.max(0, transfers.length - 1),
            note: `transfers at the rail for the order: ${transfers.length}; events: ${Object.keys(order.events).join(', ')}`,
          });

          expect(transfers, `transfers at ${rail.provider}`).to.have.length(1);
          expect(order.status).to.equal('completed');
          expect(order.ledger).to.deep.equal({ hold: 1, settle: 1 });
          expect(order.unbalancedTransactions).to.equal(0);
          expect(order.events).to.not.have.property('failed');
          expect(order.events.completed).to.equal(1);
          expect(order.workflowRuns).to.equal(1);
          const [settled] = await query<{ rail_reference: string | null }>('SELECT rail_reference FROM orders WHERE id = $1', [orderId]);
          expect(transfers[0], 'the references the rail knows the transfer by').to.include(settled.rail_reference);
          expect(worker.unexpectedExits + api.unexpectedExits, 'processes that died on their own').to.equal(0);
        } finally {
          fake.holdAnswer = undefined;
          fake.faults.refuseDuplicates = false;
        }
      });
    }
  }
});
