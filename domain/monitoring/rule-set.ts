import { z } from 'zod';

/**
 * Transaction monitoring rules as data (docs/monitoring.md#rules-as-data): the parameters of every rule, the
 * typologies that weigh their bands, and the thresholds that turn a score into a decision. A rule set is
 * versioned: compliance staff change it through the API, each change is a new version, and every stored
 * evaluation names the version it used. Pure: validated here, kept by `repositories/monitoring.ts`.
 */

/** The rules of docs/monitoring.md#rules, in the order an evaluation reports them. */
export const RULE_IDS = [
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
export type RuleId = (typeof RULE_IDS)[number];

/** A rule's result: 0 none, 1 low, 2 high. */
export type Band = 0 | 1 | 2;

/** An amount in KES minor units, as a string of digits (never a float). */
const DIGITS = /^(0|[1-9][0-9]{0,17})$/;
const minor = z.string().regex(DIGITS, 'must be whole minor units, as a string of digits');
/**
 * Whether amount `a` is at most `b`; true when either is not an amount at all (its own field reports that,
 * and a refinement still runs after a field has failed).
 */
const atMost = (a: string, b: string): boolean => !DIGITS.test(a) || !DIGITS.test(b) || BigInt(a) <= BigInt(b);
const count = z.number().int().min(1).max(100_000);
const percent = z.number().int().min(1).max(100_000);

/** A low and a high bound, the high at or above the low: what a banded rule compares against. */
const countBands = z
  .object({ low: count, high: count })
  .strict()
  .refine((b) => b.low <= b.high, { message: 'high must be at or above low' });
const percentBands = z
  .object({ low: percent, high: percent })
  .strict()
  .refine((b) => b.low <= b.high, { message: 'high must be at or above low' });
const amountBands = z
  .object({ low: minor, high: minor })
  .strict()
  .refine((b) => atMost(b.low, b.high), { message: 'high must be at or above low' });

export const ruleParametersSchema = z
  .object({
    /** The history windows every rule reads: the recent window, and the customer's norm before it. */
    windows: z.object({ recent_hours: z.number().int().min(1).max(720), norm_days: z.number().int().min(1).max(365) }).strict(),
    structuring: z
      .object({
        reporting_threshold_minor: minor,
        /** Amounts from this up to (not including) the reporting threshold count as "just below" it. */
        floor_minor: minor,
        count: countBands,
      })
      .strict()
      .refine((s) => atMost(s.floor_minor, s.reporting_threshold_minor) && s.floor_minor !== s.reporting_threshold_minor, {
        message: 'floor_minor must be below reporting_threshold_minor',
      }),
    velocity: z
      .object({
        /** Below this many movements in the recent window the rule says nothing (a norm needs some activity). */
        min_count: count,
        /** Recent count against the norm's count for the same length of time, in percent (300 = three times). */
        norm_percent: percentBands,
        /** The most movements a tier is expected to make in the recent window (`unverified`, `verified`). */
        tier_count: z.object({ unverified: countBands, verified: countBands }).strict(),
      })
      .strict(),
    pass_through: z.object({ min_in_minor: minor, out_percent: percentBands }).strict(),
    fan_in: z.object({ payers: countBands }).strict(),
    fan_out: z.object({ payees: countBands }).strict(),
    new_account_high_value: z.object({ max_age_days: z.number().int().min(1).max(365), amount_minor: amountBands }).strict(),
    dormant_reactivation: z.object({ dormant_days: z.number().int().min(1).max(365), amount_minor: amountBands }).strict(),
    round_amounts: z
      .object({ unit_minor: minor, min_minor: minor, count: countBands })
      .strict()
      .refine((r) => r.unit_minor !== '0', {
        message: 'unit_minor must be above 0',
      }),
    p2p_wash_trading: z.object({ round_trips: countBands }).strict(),
  })
  .strict()
  .refine((p) => p.windows.norm_days * 24 > p.windows.recent_hours, { message: 'the norm must be longer than the recent window' });
export type RuleParameters = z.infer<typeof ruleParametersSchema>;

const typologySchema = z
  .object({
    id: z.string().regex(/^[a-z][a-z0-9_]{0,39}$/),
    /** The weight of each rule's band in the score (rules left out weigh 0). */
    weights: z.partialRecord(z.enum(RULE_IDS), z.number().int().min(0).max(1000)),
    /** A score at or above it holds the movement for review. */
    alert_threshold: z.number().int().min(1).max(100_000),
    /** A score at or above it refuses the movement. */
    block_threshold: z.number().int().min(1).max(100_000),
  })
  .strict()
  .refine((t) => t.block_threshold >= t.alert_threshold, { message: 'block_threshold must be at or above alert_threshold' })
  .refine((t) => Object.values(t.weights).some((w) => (w ?? 0) > 0), { message: 'a typology weighs at least one rule' });
export type Typology = z.infer<typeof typologySchema>;

/** What compliance staff write: the rule parameters and the typologies (the version is given on storing). */
export const ruleSetSchema = z
  .object({
    parameters: ruleParametersSchema,
    typologies: z.array(typologySchema).min(1).max(50),
  })
  .strict()
  .refine((s) => new Set(s.typologies.map((t) => t.id)).size === s.typologies.length, { message: 'typology ids must be unique' });
export type RuleSetContent = z.infer<typeof ruleSetSchema>;

export interface RuleSet extends RuleSetContent {
  version: number;
}

/*
 * The same shape as plain interfaces, for the API's description (docs/monitoring.md#rules-as-data); the
 * schema above is what validates, and the checks below keep the two the same.
 */

/**
 * An amount in KES minor units, as a string of digits.
 * @pattern ^(0|[1-9][0-9]{0,17})$
 * @maxLength 18
 * @example "100000000"
 */
export type MinorUnits = string;

/** A low and a high bound on a count or a percentage. */
export interface CountBands {
  /**
   * @isInt
   * @minimum 1
   * @maximum 100000
   */
  low: number;
  /**
   * @isInt
   * @minimum 1
   * @maximum 100000
   */
  high: number;
}
/** A low and a high bound on an amount. */
export interface AmountBands {
  low: MinorUnits;
  high: MinorUnits;
}

export interface RuleParametersDocument {
  windows: { recent_hours: number; norm_days: number };
  structuring: { reporting_threshold_minor: MinorUnits; floor_minor: MinorUnits; count: CountBands };
  velocity: { min_count: number; norm_percent: CountBands; tier_count: { unverified: CountBands; verified: CountBands } };
  pass_through: { min_in_minor: MinorUnits; out_percent: CountBands };
  fan_in: { payers: CountBands };
  fan_out: { payees: CountBands };
  new_account_high_value: { max_age_days: number; amount_minor: AmountBands };
  dormant_reactivation: { dormant_days: number; amount_minor: AmountBands };
  round_amounts: { unit_minor: MinorUnits; min_minor: MinorUnits; count: CountBands };
  p2p_wash_trading: { round_trips: CountBands };
}

/** The weight of each rule's band in a typology's score (a rule left out weighs 0). */
export interface TypologyWeights {
  structuring?: number;
  velocity?: number;
  pass_through?: number;
  fan_in?: number;
  fan_out?: number;
  new_account_high_value?: number;
  dormant_reactivation?: number;
  round_amounts?: number;
  p2p_wash_trading?: number;
}

export interface TypologyDocument {
  /**
   * @pattern ^[a-z][a-z0-9_]{0,39}$
   * @maxLength 40
   */
  id: string;
  weights: TypologyWeights;
  /**
   * A score at or above it holds the movement for review.
   * @isInt
   * @minimum 1
   * @maximum 100000
   */
  alert_threshold: number;
  /**
   * A score at or above it refuses the movement.
   * @isInt
   * @minimum 1
   * @maximum 100000
   */
  block_threshold: number;
}

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameParameters: Same<RuleParametersDocument, RuleParameters> = true;
const sameTypology: Same<TypologyDocument, Typology> = true;
void sameParameters;
void sameTypology;

/** The problems with a proposed rule set, each with the path of the field it is about; empty when it is valid. */
export function ruleSetProblems(input: unknown): { field: string; message: string }[] {
  const parsed = ruleSetSchema.safeParse(input);
  if (parsed.success) return [];
  return parsed.error.issues.map((i) => ({ field: i.path.map(String).join('.') || 'rule_set', message: i.message }));
}

/** Parse a rule set, throwing on anything invalid (for what the store already holds). */
export const parseRuleSet = (input: unknown): RuleSetContent => ruleSetSchema.parse(input);

/**
 * The first version, stored when no version exists yet (docs/monitoring.md#the-default-rule-set). KES minor
 * units: the reporting threshold is KES 1,000,000 (the CTR threshold), "just below" starts at KES 900,000.
 */
export const DEFAULT_RULE_SET: RuleSetContent = {
  parameters: {
    windows: { recent_hours: 24, norm_days: 30 },
    structuring: { reporting_threshold_minor: '100000000', floor_minor: '90000000', count: { low: 2, high: 3 } },
    velocity: {
      min_count: 30,
      norm_percent: { low: 300, high: 600 },
      tier_count: { unverified: { low: 20, high: 60 }, verified: { low: 40, high: 80 } },
    },
    pass_through: { min_in_minor: '10000000', out_percent: { low: 90, high: 95 } },
    fan_in: { payers: { low: 10, high: 25 } },
    fan_out: { payees: { low: 10, high: 25 } },
    new_account_high_value: { max_age_days: 7, amount_minor: { low: '10000000', high: '50000000' } },
    dormant_reactivation: { dormant_days: 90, amount_minor: { low: '5000000', high: '10000000' } },
    round_amounts: { unit_minor: '1000000', min_minor: '1000000', count: { low: 5, high: 10 } },
    p2p_wash_trading: { round_trips: { low: 2, high: 4 } },
  },
  typologies: [
    { id: 'structuring', weights: { structuring: 50, round_amounts: 25, velocity: 10 }, alert_threshold: 50, block_threshold: 130 },
    { id: 'layering', weights: { pass_through: 40, velocity: 15, fan_out: 15 }, alert_threshold: 80, block_threshold: 140 },
    { id: 'velocity', weights: { velocity: 25 }, alert_threshold: 50, block_threshold: 100 },
    {
      id: 'mule_account',
      weights: { fan_in: 35, fan_out: 35, pass_through: 20, new_account_high_value: 15 },
      alert_threshold: 70,
      block_threshold: 150,
    },
    {
      id: 'account_takeover',
      weights: { new_account_high_value: 35, dormant_reactivation: 35, velocity: 10 },
      alert_threshold: 70,
      block_threshold: 140,
    },
    { id: 'p2p_wash_trading', weights: { p2p_wash_trading: 50 }, alert_threshold: 50, block_threshold: 100 },
  ],
};
