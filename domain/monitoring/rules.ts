import type { Band, RuleId, RuleParameters, RuleSet, Typology } from './rule-set';
import { RULE_IDS } from './rule-set';

/**
 * The monitoring rules and typologies (docs/monitoring.md#rules): each rule is a typed function of the
 * movement, the customer's history aggregates and its parameters, giving a band and the numbers that explain
 * it; typologies weigh the bands into scores, and the scores into a decision. Pure: the repository reads the
 * aggregates, the service stores what this returns. Amounts are KES minor units as bigint, never floats; a
 * ratio is compared by cross-multiplying.
 */

/**
 * `payout_batch`: a bulk payout, judged once as one movement when it is accepted (its KES total, no counterparty);
 * each of its orders is judged again as a `payout` when it is paid (docs/monitoring.md#bulk-payouts).
 */
export const MOVEMENT_KINDS = ['payout', 'deposit', 'p2p_trade', 'refund', 'payout_batch'] as const;
export type MovementKind = (typeof MOVEMENT_KINDS)[number];

/** The movement being judged. `counterparty` is a stable key of the other side (a payee, a payer, a trading partner). */
export interface Movement {
  kind: MovementKind;
  id: string;
  customerId: string;
  amountMinor: bigint;
  at: Date;
  counterparty: string | null;
}

/**
 * The customer's history, as the repository reads it over bounded windows (docs/monitoring.md#history-windows).
 * "Recent" is the `recent_hours` before the movement, the movement itself excluded; "norm" is the `norm_days`
 * before the recent window.
 */
export interface HistoryAggregates {
  kycVerified: boolean;
  accountOpenedAt: Date;
  recent: {
    outCount: number;
    outSumMinor: bigint;
    inCount: number;
    inSumMinor: bigint;
    /** Movements (in and out) from `structuring.floor_minor` up to (not including) the reporting threshold. */
    justBelowCount: number;
    justBelowSumMinor: bigint;
    /** Movements at or above `round_amounts.min_minor` that are a whole multiple of `round_amounts.unit_minor`. */
    roundCount: number;
    distinctPayers: number;
    distinctPayees: number;
    /** Whether the movement's counterparty is already among them. */
    counterpartySeen: boolean;
    /** P2P trades with the movement's counterparty: as buyer and as seller. */
    pairTradesBought: number;
    pairTradesSold: number;
  };
  /** Movements (in and out) in the norm window. */
  normCount: number;
  /** Movements (in and out) in the `dormant_days` before the movement. */
  dormantWindowCount: number;
}

export interface RuleResult {
  band: Band;
  /** The numbers the band was decided on: amounts as strings of minor units. */
  facts: Record<string, string | number | boolean>;
}

export type RuleResults = Record<RuleId, RuleResult>;

const band = (value: bigint, b: { low: bigint; high: bigint }): Band => (value >= b.high ? 2 : value >= b.low ? 1 : 0);
const counts = (b: { low: number; high: number }) => ({ low: BigInt(b.low), high: BigInt(b.high) });
const amounts = (b: { low: string; high: string }) => ({ low: BigInt(b.low), high: BigInt(b.high) });
const maxBand = (a: Band, b: Band): Band => (a > b ? a : b);
const isOut = (m: Movement): boolean => m.kind !== 'deposit';

/** Several movements just below the reporting threshold in the window, together at or above it. */
export function structuring(m: Movement, h: HistoryAggregates, p: RuleParameters): RuleResult {
  const s = p.structuring;
  const threshold = BigInt(s.reporting_threshold_minor);
  const below = m.amountMinor >= BigInt(s.floor_minor) && m.amountMinor < threshold;
  const count = h.recent.justBelowCount + (below ? 1 : 0);
  const sum = h.recent.justBelowSumMinor + (below ? m.amountMinor : 0n);
  const result = below && sum >= threshold ? band(BigInt(count), counts(s.count)) : 0;
  return {
    band: result,
    facts: { just_below_count: count, just_below_sum_minor: sum.toString(), reporting_threshold_minor: s.reporting_threshold_minor },
  };
}

/** Movements in the window far above the customer's own norm for the same length of time, or above the tier's. */
export function velocity(_m: Movement, h: HistoryAggregates, p: RuleParameters): RuleResult {
  const v = p.velocity;
  const recentCount = h.recent.outCount + h.recent.inCount + 1;
  const recentHours = BigInt(p.windows.recent_hours);
  const normHours = BigInt(p.windows.norm_days * 24);
  // recent / (norm × recentHours / normHours) ≥ percent / 100, cross-multiplied; an empty norm counts as one movement.
  const normCount = BigInt(Math.max(h.normCount, 1));
  const scaled = (pct: number) => BigInt(recentCount) * normHours * 100n >= BigInt(pct) * normCount * recentHours;
  const againstNorm: Band = scaled(v.norm_percent.high) ? 2 : scaled(v.norm_percent.low) ? 1 : 0;
  const tier = h.kycVerified ? v.tier_count.verified : v.tier_count.unverified;
  const againstTier = band(BigInt(recentCount), counts(tier));
  const result = recentCount < v.min_count ? 0 : maxBand(againstNorm, againstTier);
  return {
    band: result,
    facts: {
      recent_count: recentCount,
      norm_count: h.normCount,
      recent_hours: p.windows.recent_hours,
      norm_days: p.windows.norm_days,
      tier: h.kycVerified ? 'verified' : 'unverified',
      against_norm: againstNorm,
      against_tier: againstTier,
    },
  };
}

/** Most of what came in during the window paid out again (the movement included). */
export function passThrough(m: Movement, h: HistoryAggregates, p: RuleParameters): RuleResult {
  const r = p.pass_through;
  const out = h.recent.outSumMinor + (isOut(m) ? m.amountMinor : 0n);
  const inSum = h.recent.inSumMinor;
  const at = (pct: number) => out * 100n >= BigInt(pct) * inSum;
  const result: Band = !isOut(m) || inSum < BigInt(r.min_in_minor) ? 0 : at(r.out_percent.high) ? 2 : at(r.out_percent.low) ? 1 : 0;
  return { band: result, facts: { in_sum_minor: inSum.toString(), out_sum_minor: out.toString() } };
}

/** Many distinct payers into the wallet in the window (a deposit's payer included). */
export function fanIn(m: Movement, h: HistoryAggregates, p: RuleParameters): RuleResult {
  const payers = h.recent.distinctPayers + (m.kind === 'deposit' && m.counterparty && !h.recent.counterpartySeen ? 1 : 0);
  return { band: m.kind === 'deposit' ? band(BigInt(payers), counts(p.fan_in.payers)) : 0, facts: { distinct_payers: payers } };
}

/** Many distinct payees out of the wallet in the window (a payout's payee included). */
export function fanOut(m: Movement, h: HistoryAggregates, p: RuleParameters): RuleResult {
  const payees = h.recent.distinctPayees + (m.kind === 'payout' && m.counterparty && !h.recent.counterpartySeen ? 1 : 0);
  return { band: m.kind === 'payout' ? band(BigInt(payees), counts(p.fan_out.payees)) : 0, facts: { distinct_payees: payees } };
}

const DAY_MS = 86_400_000;
const ageDays = (m: Movement, h: HistoryAggregates): number => Math.floor((m.at.getTime() - h.accountOpenedAt.getTime()) / DAY_MS);

/** A high value from an account younger than `max_age_days`. */
export function newAccountHighValue(m: Movement, h: HistoryAggregates, p: RuleParameters): RuleResult {
  const r = p.new_account_high_value;
  const age = ageDays(m, h);
  const result = age < r.max_age_days ? band(m.amountMinor, amounts(r.amount_minor)) : 0;
  return { band: result, facts: { account_age_days: age, amount_minor: m.amountMinor.toString() } };
}

/** A high value from an account old enough to have been dormant, with no movement in the `dormant_days` before. */
export function dormantReactivation(m: Movement, h: HistoryAggregates, p: RuleParameters): RuleResult {
  const r = p.dormant_reactivation;
  const age = ageDays(m, h);
  const dormant = age >= r.dormant_days && h.dormantWindowCount === 0;
  return {
    band: dormant ? band(m.amountMinor, amounts(r.amount_minor)) : 0,
    facts: { account_age_days: age, movements_in_dormant_window: h.dormantWindowCount, amount_minor: m.amountMinor.toString() },
  };
}

/** Repeated round amounts in the window (the movement included). */
export function roundAmounts(m: Movement, h: HistoryAggregates, p: RuleParameters): RuleResult {
  const r = p.round_amounts;
  const round = m.amountMinor >= BigInt(r.min_minor) && m.amountMinor % BigInt(r.unit_minor) === 0n;
  const count = h.recent.roundCount + (round ? 1 : 0);
  return { band: round ? band(BigInt(count), counts(r.count)) : 0, facts: { round_count: count, unit_minor: r.unit_minor } };
}

/** The same two parties trading back and forth: round trips are the trades the less frequent direction has. */
export function p2pWashTrading(m: Movement, h: HistoryAggregates, p: RuleParameters): RuleResult {
  if (m.kind !== 'p2p_trade' || !m.counterparty) return { band: 0, facts: { round_trips: 0 } };
  const roundTrips = Math.min(h.recent.pairTradesBought, h.recent.pairTradesSold);
  return {
    band: band(BigInt(roundTrips), counts(p.p2p_wash_trading.round_trips)),
    facts: { round_trips: roundTrips, bought: h.recent.pairTradesBought, sold: h.recent.pairTradesSold },
  };
}

const RULES: Record<RuleId, (m: Movement, h: HistoryAggregates, p: RuleParameters) => RuleResult> = {
  structuring,
  velocity,
  pass_through: passThrough,
  fan_in: fanIn,
  fan_out: fanOut,
  new_account_high_value: newAccountHighValue,
  dormant_reactivation: dormantReactivation,
  round_amounts: roundAmounts,
  p2p_wash_trading: p2pWashTrading,
};

export type Decision = 'pass' | 'review' | 'refuse';

export interface TypologyScore {
  score: number;
  alert_threshold: number;
  block_threshold: number;
  decision: Decision;
}

/** A typology's score: the sum of each rule's weight times its band; at the block threshold refuse, at the alert threshold review. */
export function scoreTypology(t: Typology, results: RuleResults): TypologyScore {
  const score = RULE_IDS.reduce((sum, id) => sum + (t.weights[id] ?? 0) * results[id].band, 0);
  const decision: Decision = score >= t.block_threshold ? 'refuse' : score >= t.alert_threshold ? 'review' : 'pass';
  return { score, alert_threshold: t.alert_threshold, block_threshold: t.block_threshold, decision };
}

export interface Evaluation {
  ruleSetVersion: number;
  results: RuleResults;
  typologies: Record<string, TypologyScore>;
  /** The most severe typology decision. */
  decision: Decision;
}

const SEVERITY: Record<Decision, number> = { pass: 0, review: 1, refuse: 2 };

/** Run every rule and typology of `ruleSet` over the movement and its history. */
export function evaluate(m: Movement, h: HistoryAggregates, ruleSet: RuleSet): Evaluation {
  const results = Object.fromEntries(RULE_IDS.map((id) => [id, RULES[id](m, h, ruleSet.parameters)])) as RuleResults;
  const typologies: Record<string, TypologyScore> = {};
  let decision: Decision = 'pass';
  for (const t of ruleSet.typologies) {
    const scored = scoreTypology(t, results);
    typologies[t.id] = scored;
    if (SEVERITY[scored.decision] > SEVERITY[decision]) decision = scored.decision;
  }
  return { ruleSetVersion: ruleSet.version, results, typologies, decision };
}
