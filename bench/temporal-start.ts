import { randomUUID } from 'node:crypto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { PAYMENT_WORKFLOW, paymentWorkflowId, type PaymentWorkflowInput } from '../workflows/shared';
import { orderRunMetadata } from '../workflows/client';
import { PAYGATE_ORDER_ID } from '../workflows/search-attributes';
import type { OrderFacts } from '../domain/orders';
import { childPids, envInt, median, processCpuMs, registerSearchAttributes, temporalCliPath } from './support';

/**
 * What a workflow start costs the Temporal dev server, by what the start carries: the server's CPU per start,
 * and its rate next to a bare start's of the same round, in interleaved rounds, for a bare start and for starts
 * with Paygate's memo, summary and search attributes (bench/PROFILE.md, rounds ten and sixteen). A diagnostic of
 * (b)'s Temporal part, not one of the benchmarks:
 *
 *   node dist/bench/temporal-start.js
 *
 * Knobs: TEMPORAL_START_ROUNDS (default 4), TEMPORAL_START_COUNT (starts per variant and round, default 1500),
 * TEMPORAL_START_FRESH_QUEUE=1 (each round on a task queue of its own, else one queue, as in (b)),
 * TEMPORAL_START_KINDS (a comma-separated choice of the kinds below, default all). No worker polls the queues, so
 * every start stays open, as in (b).
 */

const CONCURRENCY = 20;

/** A payment's order as the api knows it when it starts the run. */
const order = (orderId: string): OrderFacts => ({
  id: orderId,
  userId: randomUUID(),
  method: 'mobile_money',
  status: 'pending',
  currency: 'KES',
  amountMinor: '150000',
  destination: { phone: '+254712345678' },
});

type Extra = ReturnType<typeof orderRunMetadata>;

/** The start options compared, each a part of what the api's start carries (`orderRunMetadata`), or all of it. */
const VARIANTS: Record<string, (o: OrderFacts) => Extra> = {
  bare: () => ({}),
  memo: (o) => ({ memo: orderRunMetadata(o, false).memo }),
  summary: (o) => ({ staticSummary: orderRunMetadata(o, false).staticSummary }),
  attributes: (o) => ({ typedSearchAttributes: orderRunMetadata(o, true).typedSearchAttributes }),
  paygate: (o) => orderRunMetadata(o, true),
  // One attribute of the four: what each further one costs the server (bench/PROFILE.md, round sixteen).
  'order-id': (o) => ({ typedSearchAttributes: [{ key: PAYGATE_ORDER_ID, value: o.id }] }),
};

async function main(): Promise<void> {
  const rounds = envInt('TEMPORAL_START_ROUNDS', 4);
  const count = envInt('TEMPORAL_START_COUNT', 1500);
  const freshQueue = process.env.TEMPORAL_START_FRESH_QUEUE === '1';
  const kinds = process.env.TEMPORAL_START_KINDS?.split(',').map((k) => k.trim()) ?? Object.keys(VARIANTS);
  const unknown = kinds.filter((k) => !(k in VARIANTS));
  if (unknown.length > 0) throw new Error(`unknown TEMPORAL_START_KINDS ${unknown.join(', ')}; known: ${Object.keys(VARIANTS).join(', ')}`);
  const env = await TestWorkflowEnvironment.createLocal({
    server: { executable: { type: 'existing-path', path: temporalCliPath() }, ip: '127.0.0.1', ui: false },
  });
  try {
    await registerSearchAttributes(env.connection);
    const [server] = childPids('temporal');
    if (server === undefined) throw new Error('the Temporal dev server process was not found');
    const perStart = new Map<string, number[]>();
    const rates = new Map<string, number[]>();
    for (let round = 0; round < rounds; round += 1) {
      for (const name of kinds) {
        const extra = VARIANTS[name];
        const taskQueue = freshQueue ? `temporal-start-${round}` : 'temporal-start';
        let left = count;
        const before = processCpuMs(server) ?? 0;
        const started = Date.now();
        await Promise.all(
          Array.from({ length: CONCURRENCY }, async () => {
            while (left > 0) {
              left -= 1;
              const orderId = randomUUID();
              const input: PaymentWorkflowInput = { orderId, pollAfterMs: 1000, settleTimeoutMs: 60_000 };
              await env.client.workflow.start(PAYMENT_WORKFLOW, {
                workflowId: paymentWorkflowId(orderId),
                taskQueue,
                args: [input],
                ...extra(order(orderId)),
              });
            }
          }),
        );
        const cpuMs = ((processCpuMs(server) ?? 0) - before) / count;
        perStart.set(name, [...(perStart.get(name) ?? []), cpuMs]);
        const rate = count / ((Date.now() - started) / 1000);
        rates.set(name, [...(rates.get(name) ?? []), rate]);
        process.stdout.write(
          `round ${round + 1}/${rounds} ${name.padEnd(18)} ${cpuMs.toFixed(2)} ms of server CPU a start, ${rate.toFixed(0)} starts/s\n`,
        );
      }
    }
    const bare = median(perStart.get('bare') ?? []);
    const bareRates = rates.get('bare');
    for (const [name, values] of perStart) {
      const m = median(values);
      // The rate against the bare start's of the same round, as (b) compares them (only when bare ran too).
      const relative = bareRates ? (rates.get(name) ?? []).map((r, i) => r / bareRates[i]) : [];
      const rate =
        relative.length > 0 ? `; rate ${median(relative).toFixed(2)}x bare's (${relative.map((r) => r.toFixed(2)).join(', ')})` : '';
      process.stdout.write(
        `${name.padEnd(18)} median ${m.toFixed(2)} ms a start (${(m / bare).toFixed(2)}x bare); rounds ${values.map((v) => v.toFixed(2)).join(', ')}${rate}\n`,
      );
    }
  } finally {
    await env.teardown();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
