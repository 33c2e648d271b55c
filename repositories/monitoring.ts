import { QueryTypes } from 'sequelize';
import { models, MonitoringRuleSet } from '../models';
import { uuidv7 } from '../platform/ids';
import type { RuleParameters } from '../domain/monitoring/rule-set';
import type { Evaluation, HistoryAggregates, Movement, MovementKind } from '../domain/monitoring/rules';
import { queryPrepared, type Tx } from './transaction';

/**
 * Transaction monitoring's tables (`monitoring_rule_sets`, `monitoring_evaluations`; docs/monitoring.md) and
 * the history windows its rules read. Those reads touch orders, deposits and P2P trades only through indexes
 * that start with (customer, time) (`orders_user_created`, `deposits_user_created`, `p2p_trades_pair_created`),
 * and every one is bounded by a window: never a scan of a customer's whole history.
 */

export interface StoredRuleSet {
  version: number;
  content: unknown;
  createdBy: string | null;
  createdAt: Date;
}

const stored = (r: MonitoringRuleSet): StoredRuleSet => ({
  version: r.version,
  content: r.parameters,
  createdBy: r.createdBy,
  createdAt: r.createdAt,
});

/** The current rule set: the highest version; null when none was ever stored. */
export async function currentRuleSet(tx?: Tx): Promise<StoredRuleSet | null> {
  const row = await MonitoringRuleSet.findOne({ order: [['version', 'DESC']], transaction: tx });
  return row ? stored(row) : null;
}

/** One version of the rules, as it was stored. */
export async function ruleSetVersion(version: number, tx?: Tx): Promise<StoredRuleSet | null> {
  const row = await MonitoringRuleSet.findByPk(version, { transaction: tx });
  return row ? stored(row) : null;
}

/**
 * Store `content` as `version`; false when that version exists already (two writers raced: the primary key
 * decides, and the loser's transaction is left usable).
 */
export async function insertRuleSet(version: number, content: unknown, createdBy: string | null, tx?: Tx): Promise<boolean> {
  const rows = await models().query<{ version: number }>(
    `INSERT INTO monitoring_rule_sets (version, parameters, created_by) VALUES (:version, CAST(:content AS jsonb), :createdBy)
     ON CONFLICT (version) DO NOTHING RETURNING version`,
    { replacements: { version, content: JSON.stringify(content), createdBy }, type: QueryTypes.SELECT, transaction: tx },
  );
  return rows.length === 1;
}

export interface EvaluationRecord {
  id: string;
  movementKind: MovementKind;
  movementId: string;
  customerId: string;
  ruleSetVersion: number;
  ruleResults: Record<string, unknown>;
  typologyScores: Record<string, unknown>;
  decision: Evaluation['decision'];
  createdAt: Date;
}

/**
 * Keep an evaluation only if the rule-set version it used is still the current one (no later version stored),
 * in one statement; null when the rules changed since they were read, for the caller to evaluate again with the
 * new ones. What lets a process keep the rules it read between evaluations.
 */
export async function insertEvaluationIfCurrent(
  m: Movement,
  e: Evaluation,
  tx?: Tx,
  opts: { unlessEvaluated?: boolean } = {},
): Promise<(EvaluationRecord & { earlier: boolean }) | null> {
  // Every monitored payment stores one: prepared, with the record's names as the columns' aliases. With
  // `unlessEvaluated`, a movement evaluated before keeps that evaluation: nothing is stored, and it is answered
  // (`earlier`), in the same statement.
  const [row] = await queryPrepared<EvaluationRecord & { earlier: boolean }>(
    `WITH earlier AS (
       SELECT ${EVALUATION_COLUMNS} FROM monitoring_evaluations
        WHERE $9::boolean AND movement_kind = $2 AND movement_id = $3 ORDER BY id DESC LIMIT 1
     ), kept AS (
       INSERT INTO monitoring_evaluations (id, movement_kind, movement_id, customer_id, rule_set_version, rule_results, typology_scores, decision)
       SELECT $1, $2, $3, $4, $5, $6, $7, $8
        WHERE NOT EXISTS (SELECT 1 FROM monitoring_rule_sets WHERE version > $5) AND NOT EXISTS (SELECT 1 FROM earlier)
       RETURNING ${EVALUATION_COLUMNS}
     )
     SELECT kept.*, false AS earlier FROM kept UNION ALL SELECT earlier.*, true AS earlier FROM earlier`,
    [
      uuidv7(),
      m.kind,
      m.id,
      m.customerId,
      e.ruleSetVersion,
      JSON.stringify(e.results),
      JSON.stringify(e.typologies),
      e.decision,
      opts.unlessEvaluated ?? false,
    ],
    tx,
  );
  return row ?? null;
}

const EVALUATION_COLUMNS = `id, movement_kind AS "movementKind", movement_id AS "movementId", customer_id AS "customerId",
  rule_set_version AS "ruleSetVersion", rule_results AS "ruleResults", typology_scores AS "typologyScores", decision,
  created_at AS "createdAt"`;

/** The evaluations of one movement, oldest first. */
export async function evaluationsOf(kind: MovementKind, movementId: string, tx?: Tx): Promise<EvaluationRecord[]> {
  // Read by every payment's monitoring (a retried step keeps its evaluation): straight through pg (see queryRows).
  return queryPrepared<EvaluationRecord>(
    `SELECT ${EVALUATION_COLUMNS} FROM monitoring_evaluations WHERE movement_kind = $1 AND movement_id = $2 ORDER BY id`,
    [kind, movementId],
    tx,
  );
}

interface AggregateRow {
  kyc_verified: boolean;
  account_opened_at: Date;
  out_count: number;
  out_sum: string;
  in_count: number;
  in_sum: string;
  just_below_count: number;
  just_below_sum: string;
  round_count: number;
  distinct_payers: number;
  distinct_payees: number;
  counterparty_seen: boolean;
  pair_bought: number;
  pair_sold: number;
  norm_count: number;
  dormant_count: number;
}

const DAY_MS = 86_400_000;
const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * A counted window [from, to) cut at UTC midnights: the whole days in between are read from the per-day counts
 * (`monitoring_customer_days`), the partial days at either edge from the movements themselves. A window
 * shorter than two whole days is read from the movements only (`low` is all of it).
 */
function cut(from: number, to: number): { lowFrom: Date; lowTo: Date; daysFrom: string; daysTo: string; highFrom: Date } {
  const first = Math.ceil(from / DAY_MS) * DAY_MS;
  const last = Math.floor(to / DAY_MS) * DAY_MS;
  if (first < last)
    return { lowFrom: new Date(from), lowTo: new Date(first), daysFrom: dayOf(first), daysTo: dayOf(last), highFrom: new Date(last) };
  return { lowFrom: new Date(from), lowTo: new Date(to), daysFrom: dayOf(last), daysTo: dayOf(last), highFrom: new Date(to) };
}

/**
 * The customer's history around a movement, read over the windows the parameters name (docs/monitoring.md#history-windows):
 * payouts are the customer's orders (their KES equivalent), money in their deposits in KES, neither counted
 * when it was refused or failed; the movement itself is left out. One statement, `monitoring_history` (its
 * plan prepared once per connection): the recent window and the partial days at the windows' edges from
 * orders and deposits by (customer, time), the norm's and the dormant window's whole days from the per-day
 * counts the database keeps. Null when the customer does not exist.
 */
export async function historyAggregates(m: Movement, p: RuleParameters, tx?: Tx): Promise<HistoryAggregates | null> {
  const at = m.at.getTime();
  const recentFrom = at - p.windows.recent_hours * 3_600_000;
  const normFrom = recentFrom - p.windows.norm_days * DAY_MS;
  const dormantFrom = at - p.dormant_reactivation.dormant_days * DAY_MS;
  const norm = cut(normFrom, recentFrom);
  const dormant = cut(dormantFrom, at);
  const nearFrom = new Date(Math.min(recentFrom, norm.highFrom.getTime(), dormant.highFrom.getTime()));
  const iso = (d: Date) => d.toISOString();
  // Prepared on each connection once (its plan is trivial; the function's own statement is the one that matters):
  // after that, only the parameters are sent. Timestamps in UTC.
  const [row] = await queryPrepared<AggregateRow>(
    `SELECT * FROM monitoring_history($1::uuid, $2::text, $3::uuid, $4::text, $5::text, $6::text, $7::timestamptz,
       $8::timestamptz, $9::timestamptz, $10::timestamptz, $11::timestamptz, $12::timestamptz, $13::timestamptz,
       $14::timestamptz, $15::timestamptz, $16::date, $17::date, $18::date, $19::date, $20::numeric, $21::numeric,
       $22::numeric, $23::numeric)`,
    [
      m.customerId,
      m.id,
      UUID.test(m.id) ? m.id : null,
      m.kind,
      m.counterparty ?? '',
      m.kind === 'payout' && m.counterparty && isJsonObject(m.counterparty) ? m.counterparty : 'null',
      iso(m.at),
      iso(new Date(recentFrom)),
      iso(nearFrom),
      iso(norm.highFrom),
      iso(dormant.highFrom),
      iso(norm.lowFrom),
      iso(norm.lowTo),
      iso(dormant.lowFrom),
      iso(dormant.lowTo),
      norm.daysFrom,
      norm.daysTo,
      dormant.daysFrom,
      dormant.daysTo,
      p.structuring.floor_minor,
      p.structuring.reporting_threshold_minor,
      p.round_amounts.min_minor,
      p.round_amounts.unit_minor,
    ],
    tx,
  );
  if (!row) return null;
  return {
    kycVerified: row.kyc_verified,
    accountOpenedAt: new Date(row.account_opened_at),
    recent: {
      outCount: row.out_count,
      outSumMinor: BigInt(row.out_sum),
      inCount: row.in_count,
      inSumMinor: BigInt(row.in_sum),
      justBelowCount: row.just_below_count,
      justBelowSumMinor: BigInt(row.just_below_sum),
      roundCount: row.round_count,
      distinctPayers: row.distinct_payers,
      distinctPayees: row.distinct_payees,
      counterpartySeen: row.counterparty_seen,
      pairTradesBought: row.pair_bought,
      pairTradesSold: row.pair_sold,
    },
    normCount: row.norm_count,
    dormantWindowCount: row.dormant_count,
  };
}

function isJsonObject(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}
