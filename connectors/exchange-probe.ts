import { ccxtExchange, EXCHANGE_STATUSES, type ExchangeEntry, type ExchangeStatus } from './exchanges';

/**
 * The live status probe: `fetchStatus` where the exchange has it, else `fetchTime` (an answer means it is
 * up). It is bounded every way a network can hang a refresh — a timeout per exchange, a deadline for the
 * whole probe, a limit on concurrent calls, and giving up once a run of exchanges in a row could not be
 * reached — so without a network (DNS failing, or packets silently dropped) the refresh goes on within
 * moments and the exchanges show `unknown`.
 */

export interface ProbeLimits {
  /** Per exchange: an answer later than this counts as `unknown`. */
  timeoutMs: number;
  /** For the whole probe: exchanges not answered by then are `unknown`. */
  totalMs: number;
  concurrency: number;
}

export interface ProbeResult {
  status: ExchangeStatus;
  /** When the exchange was asked; null when it was not (no way to ask, or the deadline came first). */
  checkedAt: Date | null;
}

/** Ask one exchange for its status. Injected, so that tests and offline tools can replace the network. */
export type StatusCheck = (entry: ExchangeEntry, timeoutMs: number) => Promise<ExchangeStatus>;

const isStatus = (value: unknown): value is ExchangeStatus =>
  typeof value === 'string' && (EXCHANGE_STATUSES as readonly string[]).includes(value);

/** The real check, through ccxt; any error (network, exchange down, not supported) reads as `unknown`. */
export const ccxtStatusCheck: StatusCheck = async (entry, timeoutMs) => {
  if (!entry.probeWith) return 'unknown';
  const exchange = ccxtExchange(entry.id, { timeout: timeoutMs, enableRateLimit: false });
  if (entry.probeWith === 'fetchStatus') {
    const answer = (await exchange.fetchStatus()) as { status?: unknown } | undefined;
    return isStatus(answer?.status) ? answer.status : 'unknown';
  }
  await exchange.fetchTime();
  return 'ok';
};

/**
 * After this many exchanges in a row could not be asked (error or timeout) the network is taken to be
 * unavailable: the probe stops asking and the rest stay `unknown` (keeping their last known status).
 * Exchanges are asked in a fresh random order each time, so no exchange is always the one left out.
 */
export const UNREACHABLE_STREAK = 8;

/** Probe the exchanges that can be asked; the result has an entry for every probeable exchange. */
export async function probeExchanges(entries: ExchangeEntry[], check: StatusCheck, limits: ProbeLimits): Promise<Map<string, ProbeResult>> {
  const results = new Map<string, ProbeResult>();
  const queue = shuffled(entries.filter((e) => e.probeWith !== null && e.fixedStatus === undefined));
  let stopped = false;
  let giveUp: () => void = () => undefined;
  const givenUp = new Promise<'given-up'>((resolve) => {
    giveUp = () => {
      stopped = true;
      resolve('given-up');
    };
  });
  const deadline = setTimeout(() => giveUp(), limits.totalMs);
  let streak = 0;
  let next = 0;

  const askOne = async (entry: ExchangeEntry): Promise<ExchangeStatus> => {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timed-out'>((resolve) => {
      timer = setTimeout(() => resolve('timed-out'), limits.timeoutMs);
    });
    // A check still running when we stop waiting settles on its own later; its outcome is ignored.
    const asked = Promise.resolve()
      .then(() => check(entry, limits.timeoutMs))
      .catch(() => 'unreachable' as const);
    const answer = await Promise.race([asked, timedOut, givenUp]);
    clearTimeout(timer);
    return answer === 'timed-out' || answer === 'unreachable' || answer === 'given-up' ? 'unknown' : answer;
  };

  const runner = async (): Promise<void> => {
    for (;;) {
      const entry = queue[next];
      next += 1;
      if (!entry) return;
      if (stopped) {
        results.set(entry.id, { status: 'unknown', checkedAt: null });
        continue;
      }
      const checkedAt = new Date();
      const status = await askOne(entry);
      results.set(entry.id, { status, checkedAt });
      streak = status === 'unknown' ? streak + 1 : 0;
      if (streak >= UNREACHABLE_STREAK) giveUp();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limits.concurrency, queue.length)) }, runner));
  clearTimeout(deadline);
  return results;
}

function shuffled<T>(items: T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i -= 1) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy;
}
