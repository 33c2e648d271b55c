import { evaluate, type Decision, type HistoryAggregates, type Movement, type MovementKind } from '../../domain/monitoring/rules';
import type { RuleParameters, RuleSet } from '../../domain/monitoring/rule-set';

/**
 * The labelled month of transaction monitoring (docs/monitoring.md#the-labelled-month): a generator of
 * customers and their money movements, kept as code and seeded so every run produces the same month; an
 * in-memory history index that reads the same aggregates as `repositories/monitoring.ts` reads in SQL (same
 * windows, same exclusions); and an evaluator that runs the pure rules over every movement of the month and
 * reports recall per planted typology and false alerts per 100 ordinary customers.
 */

export const TYPOLOGIES = [
  'structuring',
  'velocity',
  'pass_through',
  'fan_in',
  'fan_out',
  'new_account_high_value',
  'dormant_reactivation',
  'round_amounts',
  'p2p_wash_trading',
] as const;
export type PlantedTypology = (typeof TYPOLOGIES)[number];

/** The typology of the rule set meant to catch each planted pattern (docs/monitoring.md#the-default-rule-set). */
export const CAUGHT_BY: Record<PlantedTypology, string> = {
  structuring: 'structuring',
  velocity: 'velocity',
  pass_through: 'layering',
  fan_in: 'mule_account',
  fan_out: 'mule_account',
  new_account_high_value: 'account_takeover',
  dormant_reactivation: 'account_takeover',
  round_amounts: 'structuring',
  p2p_wash_trading: 'p2p_wash_trading',
};

const HOUR = 3_600_000;
const DAY = 86_400_000;
const KES = 100; // minor units per shilling
/** The month evaluated: 30 days from 1 October 2026; the 30 days before it are history only (the lead-in). */
export const MONTH_START = Date.UTC(2026, 9, 1);
export const MONTH_DAYS = 30;
const LEAD_IN_START = MONTH_START - 30 * DAY;
const MONTH_END = MONTH_START + MONTH_DAYS * DAY;

/** One stored movement: an order (payout or P2P trade, money out) or a deposit (money in), in KES minor units. */
export interface MonthMovement {
  id: number;
  customer: number;
  kind: Exclude<MovementKind, 'refund'>;
  at: number;
  amountMinor: number;
  /** The payee (a payout's destination), the payer (a deposit), or the partner's customer number (a P2P trade). */
  counterparty: string;
  /** For a P2P trade: whether the customer buys (else sells). */
  buys: boolean;
  /** The planted typology this movement belongs to; null for ordinary behaviour. */
  planted: PlantedTypology | null;
}

export interface MonthCustomer {
  index: number;
  kycVerified: boolean;
  openedAt: number;
  /** The typology planted in this customer; null for an ordinary customer. */
  planted: PlantedTypology | null;
}

export interface Month {
  customers: MonthCustomer[];
  /** Every movement, lead-in and month, ordered by time. */
  movements: MonthMovement[];
}

export interface MonthOptions {
  seed: number;
  ordinary: number;
  /** Customers planted with each typology (P2P wash trading is planted in pairs, so rounded up to even). */
  perTypology: number;
  /** Median movements a month of an ordinary customer (besides salary and rent). */
  medianMonthlyMovements: number;
}

/** The full month: 10,000 customers, 60 per typology, about 1,000,000 movements in the month. */
export const FULL_MONTH: MonthOptions = { seed: 20261001, ordinary: 10_000 - 9 * 60, perTypology: 60, medianMonthlyMovements: 82 };
/** The slice `npm test` runs: 1,000 ordinary customers and 50 per typology. */
export const TEST_SLICE: MonthOptions = { seed: 20261001, ordinary: 1_000, perTypology: 50, medianMonthlyMovements: 82 };

/** A seeded PRNG (mulberry32): the same seed, the same month. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Draw {
  private readonly next: () => number;
  constructor(seed: number) {
    this.next = prng(seed);
  }
  uniform(): number {
    return this.next();
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  normal(): number {
    const u = 1 - this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next());
  }
  /** Log-normal with the given median and sigma of the log. */
  logNormal(median: number, sigma: number): number {
    return median * Math.exp(sigma * this.normal());
  }
  poisson(mean: number): number {
    if (mean > 50) return Math.max(0, Math.round(mean + Math.sqrt(mean) * this.normal()));
    const limit = Math.exp(-mean);
    let k = 0;
    let p = this.next();
    while (p > limit) {
      k += 1;
      p *= this.next();
    }
    return k;
  }
  /** Index 0..n-1 with weight 1/(rank+1) (a few payees take most payments). */
  zipf(n: number): number {
    let total = 0;
    for (let i = 1; i <= n; i += 1) total += 1 / i;
    let u = this.next() * total;
    for (let i = 0; i < n; i += 1) {
      u -= 1 / (i + 1);
      if (u <= 0) return i;
    }
    return n - 1;
  }
  /** A time of day: 90 % between 07:00 and 22:00, the rest any time. */
  timeOfDay(): number {
    return this.chance(0.9) ? 7 * HOUR + this.next() * 15 * HOUR : this.next() * DAY;
  }
}

/** Whole shillings, at least one; `roundTo` rounds to that many shillings (as people do). */
const shillings = (kes: number, roundTo = 1): number => Math.max(roundTo, Math.round(kes / roundTo) * roundTo) * KES;

interface Builder {
  draw: Draw;
  customers: MonthCustomer[];
  movements: MonthMovement[];
  traders: number[];
}

function add(b: Builder, m: Omit<MonthMovement, 'id'>): void {
  b.movements.push({ ...m, id: b.movements.length + 1 });
}

/**
 * Ordinary behaviour of one customer from `from` to `to` (docs/monitoring.md#the-labelled-month): a salary on
 * a payday with the rent paid after it, other deposits from a few payers, payouts to a few payees, P2P trades
 * with other traders for some; counts Poisson around the customer's own log-normal activity, amounts log-normal.
 */
function ordinary(b: Builder, c: MonthCustomer, profile: Profile, from: number, to: number): void {
  const { draw } = b;
  const start = Math.max(from, c.openedAt);
  if (start >= to) return;
  const days = (to - start) / DAY;
  const at = (day: number) => start + day * DAY + draw.timeOfDay();
  const base = { customer: c.index, buys: false, planted: null } as const;
  // Salary and rent: on each payday in the span.
  if (profile.salary > 0) {
    for (let month = Math.floor((start - LEAD_IN_START) / (30 * DAY)); month < 3; month += 1) {
      const payday = LEAD_IN_START + month * 30 * DAY + profile.payday * DAY + 8 * HOUR + draw.uniform() * 4 * HOUR;
      if (payday < start || payday >= to) continue;
      add(b, {
        ...base,
        kind: 'deposit',
        at: payday,
        amountMinor: shillings(draw.logNormal(profile.salary, 0.1)),
        counterparty: profile.employer,
      });
      const rentAt = payday + draw.int(0, 3) * DAY + draw.uniform() * 10 * HOUR;
      if (rentAt < to)
        add(b, { ...base, kind: 'payout', at: rentAt, amountMinor: shillings(profile.rent, 500), counterparty: profile.landlord });
    }
  }
  const count = draw.poisson((profile.monthly * days) / 30);
  let lastDay = 0;
  for (let i = 0; i < count; i += 1) {
    // A third of movements fall on the same day as the one before (a shopping day, a trip).
    const day = i > 0 && draw.chance(0.3) ? lastDay : Math.floor(draw.uniform() * days);
    lastDay = day;
    const when = at(day);
    if (when >= to) continue;
    const u = draw.uniform();
    if (profile.trader && u < 0.08 && b.traders.length > 1) {
      let partner = b.traders[draw.int(0, b.traders.length - 1)];
      if (partner === c.index) partner = b.traders[(b.traders.indexOf(partner) + 1) % b.traders.length];
      add(b, {
        ...base,
        kind: 'p2p_trade',
        at: when,
        amountMinor: shillings(draw.logNormal(5_000, 0.8), 100),
        counterparty: `c${partner}`,
        buys: draw.chance(0.5),
      });
    } else if (u < 0.4) {
      const payer = profile.payers[draw.zipf(profile.payers.length)];
      add(b, {
        ...base,
        kind: 'deposit',
        at: when,
        amountMinor: shillings(draw.logNormal(1_500, 1.1), draw.chance(0.3) ? 100 : 1),
        counterparty: payer,
      });
    } else {
      const payee = profile.payees[draw.zipf(profile.payees.length)];
      add(b, {
        ...base,
        kind: 'payout',
        at: when,
        amountMinor: shillings(draw.logNormal(1_200, 1.2), draw.chance(0.25) ? 100 : 1),
        counterparty: payee,
      });
    }
  }
}

interface Profile {
  monthly: number;
  salary: number;
  payday: number;
  employer: string;
  rent: number;
  landlord: string;
  payers: string[];
  payees: string[];
  trader: boolean;
}

function profileOf(draw: Draw, index: number, median: number): Profile {
  const salaried = draw.chance(0.7);
  const salary = salaried ? Math.min(draw.logNormal(45_000, 0.6), 800_000) : 0;
  const phone = (kind: string, k: number) => `2547${kind}${String(index).padStart(5, '0')}${k}`;
  return {
    monthly: draw.logNormal(median, 0.7),
    salary,
    payday: draw.chance(0.5) ? draw.int(24, 27) : draw.int(0, 2),
    employer: `employer-${draw.int(1, 500)}`,
    rent: salary * (0.2 + draw.uniform() * 0.2),
    landlord: phone('9', 0),
    payers: Array.from({ length: draw.int(1, 4) }, (_, k) => phone('1', k)),
    payees: Array.from({ length: draw.int(2, 8) }, (_, k) => phone('2', k)),
    trader: draw.chance(0.15),
  };
}

/** Generate a month (docs/monitoring.md#the-labelled-month). Deterministic for given options. */
export function generateMonth(options: MonthOptions): Month {
  const draw = new Draw(options.seed);
  const b: Builder = { draw, customers: [], movements: [], traders: [] };
  const plantedEach = options.perTypology + (options.perTypology % 2);
  const kinds: (PlantedTypology | null)[] = [
    ...Array.from({ length: options.ordinary }, () => null),
    ...TYPOLOGIES.flatMap((t) => Array.from({ length: t === 'p2p_wash_trading' ? plantedEach : options.perTypology }, () => t)),
  ];
  const profiles: Profile[] = [];
  for (const [index, planted] of kinds.entries()) {
    const profile = profileOf(draw, index, options.medianMonthlyMovements);
    // Ordinary accounts: 3 % opened during the month, the rest 100 days to five years before it.
    const openedAt =
      planted === 'new_account_high_value' || (planted === null && draw.chance(0.03))
        ? MONTH_START + draw.int(0, 25) * DAY + draw.timeOfDay()
        : planted === 'dormant_reactivation'
          ? MONTH_START - draw.int(365, 1800) * DAY
          : MONTH_START - draw.int(100, 1800) * DAY;
    b.customers.push({ index, kycVerified: draw.chance(0.85), openedAt, planted });
    if (profile.trader || planted === 'p2p_wash_trading') b.traders.push(index);
    profiles.push(profile);
  }
  for (const c of b.customers) {
    const profile = profiles[c.index];
    if (c.planted === 'dormant_reactivation') {
      const back = MONTH_START + draw.int(2, 27) * DAY + draw.timeOfDay();
      const kind = draw.chance(0.5) ? 'deposit' : 'payout';
      const counterparty = kind === 'deposit' ? profile.payers[0] : `2547800${String(c.index).padStart(6, '0')}`;
      add(b, {
        customer: c.index,
        kind,
        at: back,
        amountMinor: shillings(draw.logNormal(400_000, 0.4), 1000),
        counterparty,
        buys: false,
        planted: c.planted,
      });
      ordinary(b, c, profile, back + HOUR, MONTH_END);
      continue;
    }
    ordinary(b, c, profile, LEAD_IN_START, MONTH_END);
    if (c.planted) plant(b, c, profile);
  }
  const washers = b.customers.filter((c) => c.planted === 'p2p_wash_trading');
  for (let k = 0; k + 1 < washers.length; k += 2) washTrades(b, washers[k].index, washers[k + 1].index);
  b.movements.sort((x, y) => x.at - y.at || x.id - y.id);
  return { customers: b.customers, movements: b.movements };
}

/** Plant the customer's typology in the month (docs/monitoring.md#the-labelled-month). */
function plant(b: Builder, c: MonthCustomer, profile: Profile): void {
  const { draw } = b;
  const planted = c.planted as PlantedTypology;
  const day = MONTH_START + draw.int(3, 26) * DAY;
  const move = (kind: MonthMovement['kind'], at: number, amountMinor: number, counterparty: string, buys = false) =>
    add(b, { customer: c.index, kind, at, amountMinor, counterparty, buys, planted });
  const fresh = (tag: string, k: number) => `2547${tag}${String(c.index).padStart(5, '0')}${String(k).padStart(2, '0')}`;
  switch (planted) {
    case 'structuring': {
      // Three to six deposits of KES 900,000–995,000 within six hours, from one or two payers.
      const start = day + 9 * HOUR;
      for (let k = 0, n = draw.int(3, 6); k < n; k += 1)
        move(
          'deposit',
          start + draw.uniform() * 6 * HOUR,
          shillings(900_000 + draw.uniform() * 95_000),
          profile.payers[k % Math.min(2, profile.payers.length)],
        );
      return;
    }
    case 'velocity':
      // Forty to eighty small payouts to the usual payees within one day.
      for (let k = 0, n = draw.int(40, 80); k < n; k += 1)
        move(
          'payout',
          day + draw.uniform() * 20 * HOUR,
          shillings(draw.logNormal(1_200, 0.8)),
          profile.payees[draw.zipf(profile.payees.length)],
        );
      return;
    case 'pass_through':
      // Three to five times: a deposit of KES 100,000–800,000, then 96–99 % of it paid out within the hour.
      for (let k = 0, n = draw.int(3, 5); k < n; k += 1) {
        const inAt = day + k * 2 * DAY + 8 * HOUR + draw.uniform() * 8 * HOUR;
        const amount = shillings(100_000 + draw.uniform() * 700_000);
        move('deposit', inAt, amount, fresh('3', k));
        const parts = draw.int(1, 3);
        const out = Math.floor((amount * (0.96 + draw.uniform() * 0.03)) / parts / KES) * KES;
        for (let p = 0; p < parts; p += 1) move('payout', inAt + (10 + draw.uniform() * 50) * 60_000, out, fresh('4', k * 3 + p));
      }
      return;
    case 'fan_in':
      // Thirty to sixty deposits of KES 500–5,000 from as many distinct new payers within one day.
      for (let k = 0, n = draw.int(30, 60); k < n; k += 1)
        move('deposit', day + draw.uniform() * 22 * HOUR, shillings(500 + draw.uniform() * 4_500), fresh('5', k));
      return;
    case 'fan_out':
      // Thirty to sixty payouts of KES 500–5,000 to as many distinct new payees within one day.
      for (let k = 0, n = draw.int(30, 60); k < n; k += 1)
        move('payout', day + draw.uniform() * 22 * HOUR, shillings(500 + draw.uniform() * 4_500), fresh('6', k));
      return;
    case 'new_account_high_value': {
      // Within five days of opening: KES 500,000–2,000,000 in, and most of it out.
      const inAt = c.openedAt + draw.uniform() * 5 * DAY;
      const amount = shillings(500_000 + draw.uniform() * 1_500_000, 1000);
      move('deposit', inAt, amount, fresh('7', 0));
      move('payout', inAt + draw.uniform() * 12 * HOUR, Math.floor((amount * 0.7) / KES) * KES, fresh('7', 1));
      return;
    }
    case 'round_amounts':
      // Ten to twenty payouts of whole multiples of KES 10,000 (KES 10,000–100,000) within one day.
      for (let k = 0, n = draw.int(10, 20); k < n; k += 1)
        move('payout', day + draw.uniform() * 20 * HOUR, draw.int(1, 10) * 10_000 * KES, profile.payees[draw.zipf(profile.payees.length)]);
      return;
    case 'p2p_wash_trading':
    case 'dormant_reactivation':
      return;
  }
}

/** A pair of wash traders: six to ten trades within one day, back and forth, each recorded by its buyer. */
function washTrades(b: Builder, first: number, second: number): void {
  const { draw } = b;
  const day = MONTH_START + draw.int(3, 26) * DAY;
  const amount = shillings(20_000 + draw.uniform() * 180_000, 100);
  for (let k = 0, n = draw.int(6, 10); k < n; k += 1) {
    const [buyer, seller] = k % 2 === 0 ? [first, second] : [second, first];
    const at = day + 9 * HOUR + k * 40 * 60_000 + draw.uniform() * 20 * 60_000;
    add(b, {
      customer: buyer,
      kind: 'p2p_trade',
      at,
      amountMinor: amount,
      counterparty: `c${seller}`,
      buys: true,
      planted: 'p2p_wash_trading',
    });
  }
}

/**
 * The customers' histories, indexed by customer and time, reading the aggregates `repositories/monitoring.ts`
 * reads in SQL: money out is the customer's orders (payouts and P2P trades), money in their deposits, the P2P
 * pair counts from trades where the customer is buyer or seller; windows `[at − recent_hours, at)`, the norm
 * the `norm_days` before that, the dormant window `[at − dormant_days, at)`. Every generated movement is
 * completed, so no status is excluded.
 */
export class HistoryIndex {
  private readonly byCustomer: MonthMovement[][];
  /** P2P trades each customer took part in, as buyer or seller, by time. */
  private readonly trades: { at: number; buyer: number; seller: number }[][];

  constructor(private readonly month: Month) {
    this.byCustomer = month.customers.map(() => []);
    this.trades = month.customers.map(() => []);
    for (const m of month.movements) {
      this.byCustomer[m.customer].push(m);
      if (m.kind === 'p2p_trade') {
        const partner = Number(m.counterparty.slice(1));
        const trade = { at: m.at, buyer: m.buys ? m.customer : partner, seller: m.buys ? partner : m.customer };
        this.trades[m.customer].push(trade);
        this.trades[partner].push(trade);
      }
    }
  }

  private static firstAt(rows: { at: number }[], at: number): number {
    let lo = 0;
    let hi = rows.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (rows[mid].at < at) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  aggregates(m: MonthMovement, p: RuleParameters): HistoryAggregates {
    const c = this.month.customers[m.customer];
    const rows = this.byCustomer[m.customer];
    const recentFrom = m.at - p.windows.recent_hours * HOUR;
    const normFrom = recentFrom - p.windows.norm_days * DAY;
    const dormantFrom = m.at - p.dormant_reactivation.dormant_days * DAY;
    const end = HistoryIndex.firstAt(rows, m.at);
    const recentStart = HistoryIndex.firstAt(rows, recentFrom);
    const floor = BigInt(p.structuring.floor_minor);
    const threshold = BigInt(p.structuring.reporting_threshold_minor);
    const roundMin = BigInt(p.round_amounts.min_minor);
    const roundUnit = BigInt(p.round_amounts.unit_minor);
    const recent = {
      outCount: 0,
      outSumMinor: 0n,
      inCount: 0,
      inSumMinor: 0n,
      justBelowCount: 0,
      justBelowSumMinor: 0n,
      roundCount: 0,
      distinctPayers: 0,
      distinctPayees: 0,
      counterpartySeen: false,
      pairTradesBought: 0,
      pairTradesSold: 0,
    };
    const payers = new Set<string>();
    const payees = new Set<string>();
    for (let i = recentStart; i < end; i += 1) {
      const r = rows[i];
      const amount = BigInt(r.amountMinor);
      if (r.kind === 'deposit') {
        recent.inCount += 1;
        recent.inSumMinor += amount;
        payers.add(r.counterparty);
      } else {
        recent.outCount += 1;
        recent.outSumMinor += amount;
        // An order's destination: a P2P trade's is its partner (never equal to a payout's payee).
        payees.add(r.kind === 'payout' ? r.counterparty : `p2p:${r.counterparty}`);
      }
      if (amount >= floor && amount < threshold) {
        recent.justBelowCount += 1;
        recent.justBelowSumMinor += amount;
      }
      if (amount >= roundMin && amount % roundUnit === 0n) recent.roundCount += 1;
    }
    recent.distinctPayers = payers.size;
    recent.distinctPayees = payees.size;
    recent.counterpartySeen = m.kind === 'deposit' ? payers.has(m.counterparty) : m.kind === 'payout' ? payees.has(m.counterparty) : false;
    if (m.kind === 'p2p_trade') {
      const partner = Number(m.counterparty.slice(1));
      const trades = this.trades[m.customer];
      for (let i = HistoryIndex.firstAt(trades, recentFrom); i < trades.length && trades[i].at < m.at; i += 1) {
        const t = trades[i];
        if (t.buyer === m.customer && t.seller === partner) recent.pairTradesBought += 1;
        if (t.seller === m.customer && t.buyer === partner) recent.pairTradesSold += 1;
      }
    }
    return {
      kycVerified: c.kycVerified,
      accountOpenedAt: new Date(c.openedAt),
      recent,
      normCount: recentStart - HistoryIndex.firstAt(rows, normFrom),
      dormantWindowCount: end - HistoryIndex.firstAt(rows, dormantFrom),
    };
  }
}

export const asMovement = (m: MonthMovement): Movement => ({
  kind: m.kind,
  id: String(m.id),
  customerId: `c${m.customer}`,
  amountMinor: BigInt(m.amountMinor),
  at: new Date(m.at),
  counterparty: m.counterparty,
});

export interface MonthFigures {
  customers: number;
  ordinaryCustomers: number;
  movementsInMonth: number;
  movementsInLeadIn: number;
  recall: Record<PlantedTypology, { planted: number; caught: number; recall: number }>;
  /** Alerts (movements reviewed or refused) of ordinary customers. */
  falseAlerts: number;
  falseAlertsPer100: number;
  /** Ordinary customers with at least one alert. */
  ordinaryCustomersAlerted: number;
  /** Ordinary customers' alerts by the typology that raised them. */
  falseAlertsByTypology: Record<string, number>;
  evaluationsPerSecond: number;
}

/**
 * Evaluate every movement of the month against its history with `ruleSet` (docs/monitoring.md#the-labelled-month).
 * A planted customer is caught when at least one of its planted movements gets `review` or `refuse` from the
 * typology meant to catch its pattern (`CAUGHT_BY`); a false alert is a movement of an ordinary customer that
 * any typology reviews or refuses.
 */
export function evaluateMonth(month: Month, ruleSet: RuleSet): MonthFigures {
  const index = new HistoryIndex(month);
  const caught = new Set<number>();
  const alerted = new Set<number>();
  const byTypology: Record<string, number> = {};
  let falseAlerts = 0;
  let inMonth = 0;
  const started = process.hrtime.bigint();
  for (const m of month.movements) {
    if (m.at < MONTH_START) continue;
    inMonth += 1;
    const e = evaluate(asMovement(m), index.aggregates(m, ruleSet.parameters), ruleSet);
    const customer = month.customers[m.customer];
    if (m.planted && customer.planted === m.planted) {
      const decision: Decision | undefined = e.typologies[CAUGHT_BY[m.planted]]?.decision;
      if (decision && decision !== 'pass') caught.add(m.customer);
    }
    if (customer.planted === null && e.decision !== 'pass') {
      falseAlerts += 1;
      alerted.add(m.customer);
      for (const [id, t] of Object.entries(e.typologies)) if (t.decision !== 'pass') byTypology[id] = (byTypology[id] ?? 0) + 1;
    }
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const ordinaryCustomers = month.customers.filter((c) => c.planted === null).length;
  const recall = Object.fromEntries(
    TYPOLOGIES.map((t) => {
      const planted = month.customers.filter((c) => c.planted === t);
      const n = planted.filter((c) => caught.has(c.index)).length;
      return [t, { planted: planted.length, caught: n, recall: planted.length ? n / planted.length : 0 }];
    }),
  ) as MonthFigures['recall'];
  return {
    customers: month.customers.length,
    ordinaryCustomers,
    movementsInMonth: inMonth,
    movementsInLeadIn: month.movements.length - inMonth,
    recall,
    falseAlerts,
    falseAlertsPer100: (falseAlerts / ordinaryCustomers) * 100,
    ordinaryCustomersAlerted: alerted.size,
    falseAlertsByTypology: byTypology,
    evaluationsPerSecond: inMonth / seconds,
  };
}

/** The figures as a table, for the test's and the full-month command's output. */
export function figuresTable(f: MonthFigures): string {
  const lines = [
    `customers ${f.customers} (${f.ordinaryCustomers} ordinary), movements in the month ${f.movementsInMonth} (lead-in ${f.movementsInLeadIn})`,
    'typology                  planted  caught  recall',
  ];
  for (const t of TYPOLOGIES) {
    const r = f.recall[t];
    lines.push(`${t.padEnd(24)} ${String(r.planted).padStart(8)} ${String(r.caught).padStart(7)}  ${r.recall.toFixed(3)}`);
  }
  lines.push(
    `false alerts: ${f.falseAlerts} on ordinary customers' movements, ${f.falseAlertsPer100.toFixed(2)} per 100 ordinary customers ` +
      `(${f.ordinaryCustomersAlerted} customers alerted); by typology ${JSON.stringify(f.falseAlertsByTypology)}`,
  );
  lines.push(`in-memory evaluations: ${Math.round(f.evaluationsPerSecond)}/s`);
  return lines.join('\n');
}
