import { QueryTypes } from 'sequelize';
import { models, MonitoringEvaluation, MonitoringRuleSet } from '../models';
import { uuidv7 } from '../platform/ids';
import type { RuleParameters } from '../domain/monitoring/rule-set';
import type { Evaluation, HistoryAggregates, Movement, MovementKind } from '../domain/monitoring/rules';
import type { Tx } from './transaction';

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

const evaluationRecord = (r: MonitoringEvaluation): EvaluationRecord => ({
  id: r.id,
  movementKind: r.movementKind,
  movementId: r.movementId,
  customerId: r.customerId,
  ruleSetVersion: r.ruleSetVersion,
  ruleResults: r.ruleResults,
  typologyScores: r.typologyScores,
  decision: r.decision,
  createdAt: r.createdAt,
});

/** Keep an evaluation, with the rule-set version it used. */
export async function insertEvaluation(m: Movement, e: Evaluation, tx?: Tx): Promise<EvaluationRecord> {
  const row = await MonitoringEvaluation.create(
    {
      id: uuidv7(),
      movementKind: m.kind,
      movementId: m.id,
      customerId: m.customerId,
      ruleSetVersion: e.ruleSetVersion,
      ruleResults: e.results as unknown as Record<string, unknown>,
      typologyScores: e.typologies as unknown as Record<string, unknown>,
      decision: e.decision,
    },
    { transaction: tx },
  );
  return evaluationRecord(row);
}

/** The evaluations of one movement, oldest first. */
export async function evaluationsOf(kind: MovementKind, movementId: string, tx?: Tx): Promise<EvaluationRecord[]> {
  const rows = await MonitoringEvaluation.findAll({ where: { movementKind: kind, movementId }, order: [['id', 'ASC']], transaction: tx });
  return rows.map(evaluationRecord);
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

/**
 * The customer's history around a movement, read over the windows the parameters name (docs/monitoring.md#history-windows):
 * payouts are the customer's orders (their KES equivalent), money in their deposits in KES, neither counted
 * when it was refused or failed; the movement itself is left out. Null when the customer does not exist.
 */
export async function historyAggregates(m: Movement, p: RuleParameters, tx?: Tx): Promise<HistoryAggregates | null> {
  const at = m.at;
  const recentFrom = new Date(at.getTime() - p.windows.recent_hours * 3_600_000);
  const normFrom = new Date(recentFrom.getTime() - p.windows.norm_days * 86_400_000);
  const dormantFrom = new Date(at.getTime() - p.dormant_reactivation.dormant_days * 86_400_000);
  const [row] = await models().query<AggregateRow>(
    `WITH outs AS (
        SELECT kes_equivalent_minor AS amount, destination FROM orders
         WHERE user_id = :customer AND created_at >= :recentFrom AND created_at < :at
           AND status NOT IN ('rejected', 'failed') AND id::text <> :movementId),
      ins AS (
        SELECT amount_minor AS amount, coalesce(payer_phone, payer_address, payer_name) AS payer FROM deposits
         WHERE user_id = :customer AND created_at >= :recentFrom AND created_at < :at AND currency = 'KES'
           AND status <> 'failed' AND id::text <> :movementId),
      movements AS (SELECT amount FROM outs UNION ALL SELECT amount FROM ins)
     SELECT u.kyc_status = 'verified' AS kyc_verified, u.created_at AS account_opened_at,
       (SELECT count(*)::int FROM outs) AS out_count,
       (SELECT coalesce(sum(amount), 0)::text FROM outs) AS out_sum,
       (SELECT count(*)::int FROM ins) AS in_count,
       (SELECT coalesce(sum(amount), 0)::text FROM ins) AS in_sum,
       (SELECT count(*)::int FROM movements WHERE amount >= :floor AND amount < :threshold) AS just_below_count,
       (SELECT coalesce(sum(amount), 0)::text FROM movements WHERE amount >= :floor AND amount < :threshold) AS just_below_sum,
       (SELECT count(*)::int FROM movements WHERE amount >= :roundMin AND mod(amount, :roundUnit) = 0) AS round_count,
       (SELECT count(DISTINCT payer)::int FROM ins WHERE payer IS NOT NULL) AS distinct_payers,
       (SELECT count(DISTINCT destination)::int FROM outs) AS distinct_payees,
       CASE :kind
         WHEN 'deposit' THEN EXISTS (SELECT 1 FROM ins WHERE payer = :counterparty)
         WHEN 'payout' THEN EXISTS (SELECT 1 FROM outs WHERE destination::text = (CAST(:counterpartyJson AS jsonb))::text)
         ELSE false END AS counterparty_seen,
       (SELECT count(*)::int FROM p2p_trades WHERE buyer_id = :customer AND seller_id::text = :counterparty
           AND created_at >= :recentFrom AND created_at < :at AND order_id::text <> :movementId) AS pair_bought,
       (SELECT count(*)::int FROM p2p_trades WHERE seller_id = :customer AND buyer_id::text = :counterparty
           AND created_at >= :recentFrom AND created_at < :at AND order_id::text <> :movementId) AS pair_sold,
       (SELECT count(*)::int FROM orders WHERE user_id = :customer AND created_at >= :normFrom AND created_at < :recentFrom
           AND status NOT IN ('rejected', 'failed'))
         + (SELECT count(*)::int FROM deposits WHERE user_id = :customer AND created_at >= :normFrom AND created_at < :recentFrom
              AND status <> 'failed') AS norm_count,
       (SELECT count(*)::int FROM orders WHERE user_id = :customer AND created_at >= :dormantFrom AND created_at < :at
           AND status NOT IN ('rejected', 'failed') AND id::text <> :movementId)
         + (SELECT count(*)::int FROM deposits WHERE user_id = :customer AND created_at >= :dormantFrom AND created_at < :at
              AND status <> 'failed' AND id::text <> :movementId) AS dormant_count
     FROM users u WHERE u.id = :customer`,
    {
      replacements: {
        customer: m.customerId,
        movementId: m.id,
        kind: m.kind,
        counterparty: m.counterparty ?? '',
        counterpartyJson: m.kind === 'payout' && m.counterparty && isJsonObject(m.counterparty) ? m.counterparty : 'null',
        at,
        recentFrom,
        normFrom,
        dormantFrom,
        floor: p.structuring.floor_minor,
        threshold: p.structuring.reporting_threshold_minor,
        roundMin: p.round_amounts.min_minor,
        roundUnit: p.round_amounts.unit_minor,
      },
      type: QueryTypes.SELECT,
      transaction: tx,
    },
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
