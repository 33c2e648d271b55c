import { randomUUID } from 'node:crypto';
import type { WorkflowHandle, WorkflowStartOptions } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { config } from '../../platform/config';
import { temporalClient } from '../../platform/temporal';

/**
 * Workflow unit tests: a workflow of ours runs on the suite's Temporal server, on a task queue of its own,
 * against activities that are plain functions. Timers are driven by short durations (milliseconds) in the
 * workflow's input, so nothing waits on the wall clock for long.
 */

/** What a mocked activity does; every call is recorded, in order, with its argument. */
export type Mock = (arg: never) => unknown;

export interface Run<R> {
  handle: WorkflowHandle;
  result: Promise<R>;
  /** The activities called so far, in order, by name. */
  calls: string[];
  /** The argument of the latest call of `name`. */
  argOf: (name: string) => unknown;
}

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;
let connection: Promise<NativeConnection> | undefined;

/** The workflow code, bundled once for the whole run (the workers of every test share it). */
const workflowBundle = (): Promise<WorkflowBundleWithSourceMap> =>
  (bundle ??= bundleWorkflowCode({ workflowsPath: require.resolve('../../workflows'), logger: new DefaultLogger('ERROR') }));

/** Bundle the workflow code ahead of the first test (it takes seconds). */
export async function prepareWorkflows(): Promise<void> {
  await workflowBundle();
  connection ??= NativeConnection.connect({ address: config().temporal.address });
  await connection;
}

/**
 * Start `workflow` with `args` under a fresh workflow id, on a fresh task queue whose worker runs these
 * activities; the worker stops once the workflow has closed (or the test ends). `start` adds to the start's
 * options (search attributes, as the api starts an order's run).
 */
export async function runWorkflow<R>(
  workflow: string,
  args: unknown[],
  activities: Record<string, Mock>,
  body: (run: Run<R>) => Promise<void> = async () => {},
  start: Pick<WorkflowStartOptions, 'typedSearchAttributes'> = {},
): Promise<R> {
  await prepareWorkflows();
  const calls: string[] = [];
  const lastArgs: Record<string, unknown> = {};
  const recorded = Object.fromEntries(
    Object.entries(activities).map(([name, fn]) => [
      name,
      (arg: never) => {
        calls.push(name);
        lastArgs[name] = arg;
        return Promise.resolve().then(() => fn(arg));
      },
    ]),
  );
  const taskQueue = `wf-unit-${randomUUID()}`;
  const worker = await Worker.create({
    connection: await connection!,
    namespace: config().temporal.namespace,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities: recorded,
  });
  return worker.runUntil(async () => {
    const handle = await temporalClient().workflow.start(workflow, {
      workflowId: `${workflow}-unit-${randomUUID()}`,
      taskQueue,
      args,
      ...start,
    });
    const result = handle.result() as Promise<R>;
    await body({ handle, result, calls, argOf: (name) => lastArgs[name] });
    return result;
  });
}

/** Poll a workflow's `stage` query until it reads `stage` (a few seconds at most). */
export async function untilStage(handle: WorkflowHandle, stage: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if ((await handle.query<string>('stage')) === stage) return;
    if (Date.now() > deadline) throw new Error(`the workflow never reached stage ${stage}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
