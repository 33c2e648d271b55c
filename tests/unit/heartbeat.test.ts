import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { expect } from 'chai';
import { heartbeating, RAIL_HEARTBEAT_EVERY_MS } from '../../workflows/activities/heartbeat';

/**
 * A rail call's heartbeat: the heartbeat timeout counts from the call's start, so a beat is owed only once a
 * call has run for one interval. A call shorter than that (a payment's submission, most of the time) sends none:
 * no heartbeat request to Temporal for it.
 */
describe('unit: a rail call keeps its heartbeat going', () => {
  // The failing call's warning is expected: kept out of the test output.
  const quietEnv = () => new MockActivityEnvironment(undefined, { logger: new DefaultLogger('ERROR') });
  const beatsOf = (env: MockActivityEnvironment): unknown[] => {
    const beats: unknown[] = [];
    env.on('heartbeat', (detail: unknown) => beats.push(detail));
    return beats;
  };

  describe('when the call ends before one interval', () => {
    it('then no heartbeat is sent, and the call answers what the work answered', async () => {
      const env = quietEnv();
      const beats = beatsOf(env);
      const answer = await env.run(() => heartbeating('submitting order-1', () => Promise.resolve('accepted')));
      expect(answer).to.equal('accepted');
      expect(beats).to.deep.equal([]);
      expect(RAIL_HEARTBEAT_EVERY_MS).to.be.at.least(500);
    });
  });

  describe('when the call runs for several intervals', () => {
    it('then it beats once an interval with its detail, and stops when the work ends', async () => {
      const env = quietEnv();
      const beats = beatsOf(env);
      // The work ends on its third beat: no assumption about how long a beat takes to come.
      const answer = await env.run(() =>
        heartbeating(
          'polling order-2',
          () =>
            new Promise<string>((resolve) => {
              env.on('heartbeat', () => {
                if (beats.length === 3) resolve('completed');
              });
            }),
          5,
        ),
      );
      const atEnd = beats.length;
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(answer).to.equal('completed');
      expect(beats.slice(0, 3)).to.deep.equal(['polling order-2', 'polling order-2', 'polling order-2']);
      expect(beats.length).to.equal(atEnd);
    });
  });

  describe('when the work fails', () => {
    it("then the failure is the call's, and the beat stops", async () => {
      const env = quietEnv();
      const beats = beatsOf(env);
      const failure = await env
        .run(() => heartbeating('submitting order-3', () => Promise.reject(new Error('rail down')), 5))
        .catch((err: unknown) => err);
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect((failure as Error).message).to.equal('rail down');
      expect(beats).to.deep.equal([]);
    });
  });
});
