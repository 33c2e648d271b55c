import type { PayoutMethod } from './shared';

/**
 * The bulk payout's sliding window, as pure logic that the `payout-batch` workflow and its local activity share:
 * which of the queued items may start now. Deterministic, no I/O.
 */

/** An item of a batch: its row, its rail, and its order once it has one. */
export interface BatchItem {
  row: number;
  method: PayoutMethod;
  orderId: string | null;
}

/** Items in flight, or allowed in flight, per rail. */
export type PerRail = Record<PayoutMethod, number>;

/**
 * The queued items to start now, in row order: as many of each rail as it has free places (`concurrency` less
 * `busy`), and no more than `budget` in all. An item whose rail is full waits; items of other rails behind it go.
 */
export function itemsToStart<T extends { method: PayoutMethod }>(
  queue: readonly T[],
  busy: PerRail,
  concurrency: PerRail,
  budget: number,
): T[] {
  const taken: PerRail = { bank_transfer: 0, mobile_money: 0, crypto: 0 };
  const picked: T[] = [];
  for (const item of queue) {
    if (picked.length >= budget) break;
    if (busy[item.method] + taken[item.method] < concurrency[item.method]) {
      taken[item.method] += 1;
      picked.push(item);
    }
  }
  return picked;
}

/**
 * The queued items that could start however many in flight end meanwhile: the first `concurrency` of each rail,
 * in row order. `itemsToStart` picks the same items from them as from the whole queue, whatever `busy` is.
 */
export function startCandidates<T extends { method: PayoutMethod }>(queue: readonly T[], concurrency: PerRail): T[] {
  return itemsToStart(queue, { bank_transfer: 0, mobile_money: 0, crypto: 0 }, concurrency, Number.POSITIVE_INFINITY);
}
