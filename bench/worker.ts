import { componentLogger } from '../platform/logger';
import { main } from '../workers/temporal-worker';

/** The `hello` workflow's one activity. */
export const benchActivities = {
  hello(name: string): Promise<string> {
    return Promise.resolve(`hello, ${name}`);
  },
};

export type BenchActivities = typeof benchActivities;

/**
 * The worker process the benchmarks run: the production worker (`workers/temporal-worker.ts`), with the
 * `hello` workflow and its activity beside Paygate's, so that a payment and a hello share one worker.
 */
if (require.main === module) {
  main({ workflowsPath: require.resolve('./workflows'), activities: benchActivities }).catch((err: unknown) => {
    componentLogger('worker').fatal({ err }, 'worker failed');
    process.exit(1);
  });
}
