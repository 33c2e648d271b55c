import { expect } from 'chai';
import { QuotaCounter, type QuotaAsk, type QuotaStore, type QuotaVerdict } from '../../services/rate-limits';

/**
 * The API quota counted in process (docs/conventions.md#rate-limits): each process admits from what it knows,
 * sends its counts in batches, and the fleet admits at least the limit and at most limit + (N − 1) × B in a window.
 */

const WINDOW_MS = 60_000;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const random = (below: number) => Math.floor(Math.random() * below);

/** A shared store, as Redis would be: each batch is counted after a random delay and answered after another. */
class FakeStore implements QuotaStore {
  readonly totals = new Map<string, number>();
  isReady = true;
  /** Batches sent, and how many were not answered on purpose. */
  calls = 0;
  hang = false;
  failNext = false;

  constructor(private readonly maxDelayMs = 0) {}

  ready(): boolean {
    return this.isReady;
  }

  async add(counts: { key: string; n: number; ttlMs: number }[]): Promise<(number | Error)[]> {
    this.calls += 1;
    if (this.hang) return new Promise(() => undefined);
    if (this.failNext) {
      this.failNext = false;
      throw new Error('connection lost');
    }
    if (this.maxDelayMs > 0) await sleep(random(this.maxDelayMs + 1));
    const totals = counts.map((c) => {
      const total = (this.totals.get(c.key) ?? 0) + c.n;
      this.totals.set(c.key, total);
      return total;
    });
    if (this.maxDelayMs > 0) await sleep(random(this.maxDelayMs + 1));
    return totals;
  }

  /** The fleet's total for a quota over all windows. */
  total(key: string): number {
    let sum = 0;
    for (const [k, v] of this.totals) if (k.startsWith(`${key}:`)) sum += v;
    return sum;
  }
}

const ask = (key: string, limit: number, name: QuotaAsk['name'] = 'default'): QuotaAsk => ({ name, key, limit });

/** A clock a second into a window, moved only by hand: no test runs into the end of a window by chance. */
function clock(): { now: () => number; advance: (ms: number) => void } {
  let t = 1_700_000_040_000 - (1_700_000_040_000 % WINDOW_MS) + 1_000;
  return { now: () => t, advance: (ms) => (t += ms) };
}

const counter = (store: QuotaStore, batch: number, options: { waitMs?: number; now?: () => number } = {}) =>
  new QuotaCounter(store, { windowMs: WINDOW_MS, batch: () => batch, waitMs: options.waitMs ?? 5_000, now: options.now ?? clock().now });

describe('unit: the API quota counted in process', () => {
  describe('when one process counts a quota', () => {
    it('then it admits exactly the limit, says what is left, refuses the rest with the seconds to reset, and never counts a refusal', async () => {
      const store = new FakeStore();
      const time = clock();
      const quota = counter(store, 2, { now: time.now });
      const verdicts: QuotaVerdict[] = [];
      for (let i = 0; i < 9; i += 1) verdicts.push(await quota.take([ask('k1', 5)]));
      expect(verdicts.map((v) => v.admitted)).to.deep.equal([true, true, true, true, true, false, false, false, false]);
      expect(verdicts.slice(0, 5).map((v) => v.quotas[0].remaining)).to.deep.equal([4, 3, 2, 1, 0]);
      const refused = verdicts[5];
      expect(refused.exceeded.map((q) => q.name)).to.deep.equal(['default']);
      expect(refused.quotas[0]).to.deep.equal({ name: 'default', limit: 5, remaining: 0, resetSeconds: 59, windowSeconds: 60 });
      await quota.flush();
      expect(store.total('k1')).to.equal(5);
    });
  });

  describe('when a request is past one of its two quotas', () => {
    it('then it is refused, the exceeded one is named, and neither quota counts it', async () => {
      const quota = counter(new FakeStore(), 10);
      expect((await quota.take([ask('key-a', 100), ask('acct', 1, 'account')])).admitted).to.equal(true);
      const refused = await quota.take([ask('key-b', 100), ask('acct', 1, 'account')]);
      expect(refused.admitted).to.equal(false);
      expect(refused.exceeded.map((q) => q.name)).to.deep.equal(['account']);
      expect(refused.quotas[0].remaining).to.equal(100);
      expect((await quota.take([ask('key-b', 100)])).quotas[0].remaining).to.equal(99);
    });
  });

  describe('when a process has admitted B requests Redis has not counted', () => {
    it('then the next one waits for the round trip, and the fleet total answered becomes what it knows', async () => {
      const store = new FakeStore();
      const other = counter(store, 3);
      const quota = counter(store, 3);
      // Another process used 8 of the 10 and told the store.
      for (let i = 0; i < 8; i += 1) await other.take([ask('shared', 10)]);
      await other.flush();
      const sent = store.calls;
      for (let i = 0; i < 3; i += 1) expect((await quota.take([ask('shared', 10)])).admitted).to.equal(true);
      expect(store.calls, 'no round trip for the first B').to.equal(sent);
      // The fourth waits for the store: 8 + 3 = 11 counted, so it is refused, and so is everything after.
      const fourth = await quota.take([ask('shared', 10)]);
      expect(store.calls).to.equal(sent + 1);
      expect(fourth.admitted).to.equal(false);
      expect(store.total('shared')).to.equal(11);
      expect((await other.take([ask('shared', 10)])).admitted, 'the other process, before its next answer').to.equal(true);
      await other.flush();
      expect((await other.take([ask('shared', 10)])).admitted, 'the other process, after it').to.equal(false);
    });
  });

  for (const { processes, batch, limit } of [
    { processes: 2, batch: 1, limit: 10 },
    { processes: 2, batch: 5, limit: 20 },
    { processes: 3, batch: 4, limit: 30 },
    { processes: 5, batch: 8, limit: 50 },
  ]) {
    describe(`when ${processes} processes with B = ${batch} take a burst of three times the limit ${limit} on one quota`, () => {
      it(`then the fleet admits at least ${limit} and at most ${limit} + (${processes} − 1) × ${batch}, every time`, async () => {
        for (let round = 0; round < 20; round += 1) {
          const store = new FakeStore(3);
          const fleet = Array.from({ length: processes }, () => counter(store, batch));
          const timers = fleet.map((c) => setInterval(() => void c.flush(), 1 + random(4)));
          try {
            const verdicts = await Promise.all(
              Array.from({ length: 3 * limit }, async (_, i) => {
                await sleep(random(10));
                return fleet[i % processes].take([ask('burst', limit)]);
              }),
            );
            const admitted = verdicts.filter((v) => v.admitted).length;
            expect(admitted, `round ${round}`).to.be.within(limit, limit + (processes - 1) * batch);
            for (const v of verdicts.filter((r) => !r.admitted)) expect(v.quotas[0].remaining).to.equal(0);
            await Promise.all(fleet.map((c) => c.flush()));
            expect(store.total('burst'), 'every admitted request reaches the store').to.equal(admitted);
          } finally {
            timers.forEach(clearInterval);
          }
        }
      });
    });
  }

  describe('when the processes interleave as badly as they can', () => {
    it('then the fleet reaches limit + (N − 1) × B, and no more', async () => {
      const store = new FakeStore();
      const p = counter(store, 2);
      const q = counter(store, 2);
      const take = async (c: QuotaCounter) => (await c.take([ask('worst', 4)])).admitted;
      // Both admit B before either has told the store.
      expect([await take(p), await take(p), await take(q), await take(q)]).to.deep.equal([true, true, true, true]);
      await p.flush(); // the store has 2; p knows 2
      expect([await take(p), await take(p), await take(p)]).to.deep.equal([true, true, false]); // p: 2 + 2 = 4
      await q.flush(); // 4; q knows 4
      await p.flush(); // 6
      expect(store.total('worst')).to.equal(4 + (2 - 1) * 2);
      expect([await take(p), await take(q)]).to.deep.equal([false, false]);
    });
  });

  describe('when Redis is away', () => {
    it('then requests are counted in the process up to the limit, never wait on the store, and the counts are sent once it is back', async () => {
      const store = new FakeStore();
      store.isReady = false;
      store.hang = true;
      const quota = counter(store, 1, { waitMs: 60_000 });
      const verdicts: boolean[] = [];
      for (let i = 0; i < 8; i += 1) verdicts.push((await quota.take([ask('away', 5)])).admitted);
      expect(verdicts).to.deep.equal([true, true, true, true, true, false, false, false]);
      await quota.flush();
      expect(store.calls).to.equal(0);
      store.isReady = true;
      store.hang = false;
      await quota.flush();
      expect(store.total('away')).to.equal(5);
    });
  });

  describe('when Redis is connected but does not answer', () => {
    it('then the first request past the batch waits the wait bound, the next ones not at all, and the process counts on its own', async () => {
      const store = new FakeStore();
      store.hang = true;
      let t = 1_000;
      const quota = new QuotaCounter(store, { windowMs: WINDOW_MS, batch: () => 1, waitMs: 50, now: () => t });
      const verdicts: boolean[] = [];
      const waited: number[] = [];
      for (let i = 0; i < 5; i += 1) {
        const started = Date.now();
        verdicts.push((await quota.take([ask('slow', 4)])).admitted);
        waited.push(Date.now() - started);
        t += 60; // past the wait bound: the batch sent is overdue
      }
      expect(verdicts).to.deep.equal([true, true, true, true, false]);
      expect(waited[1], 'the one that found the batch full').to.be.within(40, 1_000);
      expect(Math.max(waited[0], ...waited.slice(2)), 'the others, with the batch overdue').to.be.below(40);
      expect(store.calls).to.equal(1);
    });
  });

  describe('when a batch is not counted', () => {
    it('then its counts are kept, still refuse past the limit, and go with the next batch', async () => {
      const store = new FakeStore();
      const quota = counter(store, 10);
      for (let i = 0; i < 3; i += 1) await quota.take([ask('lost', 3)]);
      store.failNext = true;
      await quota.flush();
      expect(store.total('lost')).to.equal(0);
      expect((await quota.take([ask('lost', 3)])).admitted).to.equal(false);
      await quota.flush();
      expect(store.total('lost')).to.equal(3);
    });
  });

  describe('when the window ends', () => {
    it('then the quota starts again under a key of the new window, and the old window is forgotten', async () => {
      const store = new FakeStore();
      const time = clock();
      const quota = counter(store, 10, { now: time.now });
      for (let i = 0; i < 2; i += 1) await quota.take([ask('roll', 2)]);
      expect((await quota.take([ask('roll', 2)])).admitted).to.equal(false);
      await quota.flush();
      time.advance(WINDOW_MS);
      const fresh = await quota.take([ask('roll', 2)]);
      expect(fresh.admitted).to.equal(true);
      expect(fresh.quotas[0]).to.include({ remaining: 1, resetSeconds: 59 });
      await quota.flush();
      expect([...store.totals.values()]).to.deep.equal([2, 1]);
      const start = (time.now() - (time.now() % WINDOW_MS)) / 1000;
      expect([...store.totals.keys()]).to.deep.equal([`roll:${start - 60}`, `roll:${start}`]);
    });
  });
});
