import { expect } from 'chai';
import { startRailFakes, type RailFakes } from '../fakes/rails';
import { RUN_ID } from './env';
import { startJobsProcess, type JobsProcess } from './processes';

/** Every job schedule a rail test may want frequent; the others are set an hour apart so they stay quiet. */
const SCHEDULES = [
  'MATCH_BANK_DEPOSITS_EVERY_MS',
  'MATCH_CRYPTO_DEPOSITS_EVERY_MS',
  'RECONCILE_INTERVAL_MS',
  'REFRESH_EXCHANGES_EVERY_MS',
  'REFRESH_BANKS_EVERY_MS',
] as const;

/**
 * For the enclosing `describe`: the provider fakes, and the jobs process started from the build against them
 * with its own queue prefix, only `frequent` running every 200 ms. Stopped after the block, and required to
 * exit cleanly.
 */
export function jobsAgainstRailFakes(name: string, frequent: (typeof SCHEDULES)[number]): () => { fakes: RailFakes; jobs: JobsProcess } {
  let started: { fakes: RailFakes; jobs: JobsProcess } | undefined;
  before(async () => {
    const fakes = await startRailFakes();
    const quiet = Object.fromEntries(SCHEDULES.map((s) => [s, s === frequent ? '200' : '3600000']));
    started = { fakes, jobs: startJobsProcess({ ...fakes.env, ...quiet, QUEUE_PREFIX: `paygate-${name}-${RUN_ID}` }) };
  });
  after(async () => {
    if (!started) return;
    expect(await started.jobs.stop(), 'the jobs process exits cleanly').to.equal(0);
    await started.fakes.close();
  });
  return () => {
    if (!started) throw new Error('the rail fakes and jobs process start in the before hook');
    return started;
  };
}
