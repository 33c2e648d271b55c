import { expect } from 'chai';
import { itemsToStart, startCandidates, type PerRail } from '../../workflows/batch-window';
import type { PayoutMethod } from '../../workflows/shared';

const RAILS: PayoutMethod[] = ['mobile_money', 'bank_transfer', 'crypto'];
const CONCURRENCY: PerRail = { mobile_money: 3, bank_transfer: 2, crypto: 1 };
const none = (): PerRail => ({ mobile_money: 0, bank_transfer: 0, crypto: 0 });

const queueOf = (methods: PayoutMethod[]) => methods.map((method, i) => ({ row: i + 1, method }));
const rows = (items: { row: number }[]) => items.map((item) => item.row);

/** A small deterministic generator (mulberry32), so that a failure names its seed and replays. */
function generator(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('unit: a bulk payout’s sliding window', () => {
  describe('when items are queued and the rails have free places', () => {
    it('then as many of each rail start as it has free places, in row order', () => {
      const queue = queueOf(['mobile_money', 'mobile_money', 'bank_transfer', 'mobile_money', 'mobile_money', 'bank_transfer']);
      const busy = { ...none(), mobile_money: 1, bank_transfer: 1 };
      expect(rows(itemsToStart(queue, busy, CONCURRENCY, 100))).to.deep.equal([1, 2, 3]);
    });

    it('then an item whose rail is full waits, and items of other rails behind it go', () => {
      const queue = queueOf(['crypto', 'crypto', 'mobile_money', 'crypto', 'bank_transfer']);
      expect(rows(itemsToStart(queue, none(), CONCURRENCY, 100))).to.deep.equal([1, 3, 5]);
    });

    it('then no more start than the run’s budget, the first ones in row order', () => {
      const queue = queueOf(['mobile_money', 'bank_transfer', 'mobile_money', 'crypto']);
      expect(rows(itemsToStart(queue, none(), CONCURRENCY, 2))).to.deep.equal([1, 2]);
      expect(itemsToStart(queue, none(), CONCURRENCY, 0)).to.deep.equal([]);
    });

    it('then nothing starts on a rail already at its concurrency', () => {
      const queue = queueOf(['mobile_money', 'mobile_money']);
      expect(itemsToStart(queue, { ...none(), mobile_money: 3 }, CONCURRENCY, 100)).to.deep.equal([]);
    });
  });

  describe('when the local activity picks from the candidates the workflow sent it, after concluding items', () => {
    it('then it starts exactly what picking from the whole queue would, whatever is busy and whatever the budget', () => {
      for (let seed = 1; seed <= 500; seed += 1) {
        const random = generator(seed);
        const queue = queueOf(Array.from({ length: Math.floor(random() * 30) }, () => RAILS[Math.floor(random() * RAILS.length)]));
        const busy: PerRail = {
          mobile_money: Math.floor(random() * (CONCURRENCY.mobile_money + 1)),
          bank_transfer: Math.floor(random() * (CONCURRENCY.bank_transfer + 1)),
          crypto: Math.floor(random() * (CONCURRENCY.crypto + 1)),
        };
        const budget = Math.floor(random() * 8);
        const candidates = startCandidates(queue, CONCURRENCY);
        expect(rows(itemsToStart(candidates, busy, CONCURRENCY, budget)), `seed ${seed}`).to.deep.equal(
          rows(itemsToStart(queue, busy, CONCURRENCY, budget)),
        );
      }
    });

    it('then the candidates are at most each rail’s concurrency, the first of each in row order', () => {
      const queue = queueOf(['crypto', 'crypto', 'mobile_money', 'bank_transfer', 'bank_transfer', 'bank_transfer', 'mobile_money']);
      expect(rows(startCandidates(queue, CONCURRENCY))).to.deep.equal([1, 3, 4, 5, 7]);
    });
  });
});
