import { proxyActivities } from '@temporalio/workflow';
import type { BenchActivities } from './worker';

const { hello: helloActivity } = proxyActivities<BenchActivities>({ startToCloseTimeout: '10s' });

/** The smallest workflow with one activity: the baseline the payment benchmark is measured against. */
export async function hello(name: string): Promise<string> {
  return await helloActivity(name);
}
