import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { APPEAL_WORKFLOW, appealWorkflowId, type AppealWorkflowInput } from '../domain/appeals/contract';
import type { AppealActivities } from '../workflows/activities/appeals';

/**
 * Temporal worker memory per parked appeal workflow (issue target: at most 1 MB each).
 *
 * Starts a worker in this process with the real workflow code and `maxCachedWorkflows` as the production
 * worker sets it (500: parked workflows beyond that are evicted and replayed on demand), parks `count`
 * open appeals (SLA of a day, so none expires), waits until every one has run its first workflow task
 * and sits on its SLA timer, then compares the process's memory with the idle worker's. The appeals are
 * terminated afterwards. Run node with `--expose-gc` for steadier numbers.
 */
export interface ParkedAppealsResult {
  count: number;
  maxCachedWorkflows: number;
  /** Worker process RSS once warm, before the appeals are parked (the baseline). */
  idleRssBytes: number;
  /** The same process's RSS with every appeal parked. */
  parkedRssBytes: number;
  rssPerAppealBytes: number;
  heapPerAppealBytes: number;
  withinTarget: boolean;
}

const MB = 1024 * 1024;

function settle(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
}

export async function measureParkedAppeals(options: {
  temporalAddress: string;
  namespace?: string;
  count?: number;
  maxCachedWorkflows?: number;
}): Promise<ParkedAppealsResult> {
  const count = options.count ?? 1000;
  const maxCachedWorkflows = options.maxCachedWorkflows ?? 500;
  const namespace = options.namespace ?? 'default';
  const taskQueue = `bench-appeals-${randomUUID()}`;
  const connection = await NativeConnection.connect({ address: options.temporalAddress });
  const clientConnection = await Connection.connect({ address: options.temporalAddress });
  const client = new Client({ connection: clientConnection, namespace });
  // Parked appeals run no activity; these only satisfy the workflow's proxies.
  const activities: AppealActivities = {
    decideAppeal: () => Promise.reject(new Error('not decided in the benchmark')),
    expireAppeal: () => Promise.resolve(),
  };
  const worker = await Worker.create({
    connection,
    namespace,
    taskQueue,
    workflowsPath: require.resolve('../workflows'),
    activities,
    maxCachedWorkflows,
  });
  const running = worker.run();
  const ids: string[] = [];
  try {
    // Warm the worker (bundle loaded, one workflow run) before the baseline.
    const warm = await startAppeal(client, taskQueue);
    ids.push(warm);
    await waitParked(client, [warm]);
    settle();
    const before = process.memoryUsage();

    const batch: string[] = [];
    for (let i = 0; i < count; i += 50) {
      const started = await Promise.all(Array.from({ length: Math.min(50, count - i) }, () => startAppeal(client, taskQueue)));
      batch.push(...started);
    }
    ids.push(...batch);
    await waitParked(client, batch);
    settle();
    const after = process.memoryUsage();
    const rssPerAppealBytes = Math.max(0, (after.rss - before.rss) / count);
    const heapPerAppealBytes = Math.max(0, (after.heapUsed - before.heapUsed) / count);
    return {
      count,
      maxCachedWorkflows,
      idleRssBytes: before.rss,
      parkedRssBytes: after.rss,
      rssPerAppealBytes,
      heapPerAppealBytes,
      withinTarget: rssPerAppealBytes <= MB,
    };
  } finally {
    await Promise.all(
      ids.map((id) =>
        client.workflow
          .getHandle(id)
          .terminate('benchmark done')
          .catch(() => undefined),
      ),
    );
    worker.shutdown();
    await running;
    await clientConnection.close();
    await connection.close();
  }
}

async function startAppeal(client: Client, taskQueue: string): Promise<string> {
  const appealId = randomUUID();
  const input: AppealWorkflowInput = {
    appealId,
    orderId: randomUUID(),
    appellantId: randomUUID(),
    orderOwnerId: randomUUID(),
    counterpartyId: null,
    slaMs: 24 * 3600 * 1000,
    pollAfterMs: 1000,
    settleTimeoutMs: 60_000,
  };
  const handle = await client.workflow.start(APPEAL_WORKFLOW, { workflowId: appealWorkflowId(appealId), taskQueue, args: [input] });
  return handle.workflowId;
}

/** Every workflow has completed its first task: it has started its SLA timer and waits. */
async function waitParked(client: Client, ids: string[]): Promise<void> {
  const pending = new Set(ids);
  const deadline = Date.now() + 300_000;
  while (pending.size > 0) {
    if (Date.now() > deadline) throw new Error(`${pending.size} appeals never parked`);
    for (const id of [...pending].slice(0, 100)) {
      const described = await client.workflow.getHandle(id).describe();
      if (described.historyLength >= 5) pending.delete(id);
    }
    if (pending.size > 0) await new Promise((r) => setTimeout(r, 200));
  }
}

if (require.main === module) {
  measureParkedAppeals({
    temporalAddress: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233',
    count: Number(process.env.BENCH_APPEALS ?? 1000),
  })
    .then((result) => {
      process.stdout.write(
        `${JSON.stringify({ ...result, rssPerAppealMB: (result.rssPerAppealBytes / MB).toFixed(3), heapPerAppealMB: (result.heapPerAppealBytes / MB).toFixed(3) })}\n`,
      );
    })
    .catch((err: unknown) => {
      process.stderr.write(`${String(err)}\n`);
      process.exit(1);
    });
}
