import { AppError, notFound } from '../platform/errors';
import { componentLogger } from '../platform/logger';
import { isStaff, type Caller } from '../domain/caller';
import {
  DEFAULT_RULE_SET,
  parseRuleSet,
  ruleSetProblems,
  type RuleParametersDocument,
  type RuleSet,
  type RuleSetContent,
  type TypologyDocument,
} from '../domain/monitoring/rule-set';
import { evaluate, type Decision, type Movement, type RuleResults, type TypologyScore } from '../domain/monitoring/rules';
import {
  currentRuleSet,
  historyAggregates,
  insertEvaluationIfCurrent,
  insertRuleSet,
  type StoredRuleSet,
} from '../repositories/monitoring';
import { inTransaction, type Tx } from '../repositories/transaction';
import { recordStaffAction } from './audit';
import { fileAlert } from './cases-service';

/**
 * Transaction monitoring (docs/monitoring.md): evaluate a money movement against the current rules and keep
 * the evaluation; compliance staff read and change the rules, each change a new, audited version that applies
 * from then on. Nothing here is ever shown to the customer the movement belongs to.
 */

const log = componentLogger('monitoring');

const asRuleSet = (s: StoredRuleSet): RuleSet => ({ version: s.version, ...parseRuleSet(s.content) });

type CurrentRules = RuleSet & { createdBy: string | null; createdAt: Date };

/** The current rules, and whether this read stored them (the default, on first use). */
async function readRules(tx?: Tx): Promise<{ rules: CurrentRules; stored: boolean }> {
  let found = await currentRuleSet(tx);
  let stored = false;
  if (!found) {
    stored = await insertRuleSet(1, DEFAULT_RULE_SET, null, tx);
    found = await currentRuleSet(tx);
    if (!found) throw new AppError('internal', 'the default monitoring rules could not be stored');
  }
  return { rules: { ...asRuleSet(found), createdBy: found.createdBy, createdAt: found.createdAt }, stored };
}

/** The current rules; on first use the default (docs/monitoring.md#the-default-rule-set) is stored as version 1. */
export async function currentRules(tx?: Tx): Promise<CurrentRules> {
  return (await readRules(tx)).rules;
}

/**
 * The rules this process last read, kept between evaluations (docs/monitoring.md#evaluations): an evaluation
 * is stored only while no later version exists (`insertEvaluationIfCurrent`), so rules changed by any process
 * apply from the next evaluation on, which reads them again. Rules stored by a read inside a transaction are
 * not kept: the transaction may yet roll back.
 */
let keptRules: CurrentRules | undefined;

async function rulesToEvaluate(tx: Tx | undefined, fresh: boolean): Promise<CurrentRules> {
  if (keptRules && !fresh) return keptRules;
  const { rules, stored } = await readRules(tx);
  keptRules = stored && tx ? undefined : rules;
  return rules;
}

export interface EvaluationOutcome {
  evaluationId: string;
  ruleSetVersion: number;
  decision: Decision;
  results: RuleResults;
  typologies: Record<string, TypologyScore>;
}

/**
 * Evaluate a movement before its money moves (docs/monitoring.md#evaluations): read the customer's history
 * windows, run the current rules and typologies, keep the evaluation with the version it used, and return the
 * decision (`pass`, `review` to hold it as a screening review does, `refuse`). In `tx` when the movement's
 * own transaction carries it (a deposit's credit).
 */
export async function evaluateMovement(movement: Movement, tx?: Tx, opts: { keepEarlier?: boolean } = {}): Promise<EvaluationOutcome> {
  const once = { unlessEvaluated: opts.keepEarlier ?? false };
  for (let fresh = false; ; fresh = true) {
    const rules = await rulesToEvaluate(tx, fresh);
    const history = await historyAggregates(movement, rules.parameters, tx);
    if (!history) throw notFound('customer');
    const evaluation = evaluate(movement, history, rules);
    // The evaluation and, when it is an alert, its place in the customer's case commit together (in the
    // movement's own transaction when it has one). An earlier evaluation kept instead was filed when it was made.
    const keep = async (t: Tx) => {
      const stored = await insertEvaluationIfCurrent(movement, evaluation, t, once);
      if (stored && !stored.earlier) await fileAlert(t, stored);
      return stored;
    };
    // A pass files nothing: its evaluation is one statement of its own, with no transaction around it.
    const kept = tx
      ? await keep(tx)
      : evaluation.decision === 'pass'
        ? await insertEvaluationIfCurrent(movement, evaluation, undefined, once)
        : await inTransaction(keep);
    // The rules changed since they were read: evaluated again with the new ones.
    if (!kept) continue;
    if (kept.earlier) {
      return {
        evaluationId: kept.id,
        ruleSetVersion: kept.ruleSetVersion,
        decision: kept.decision,
        results: kept.ruleResults as unknown as RuleResults,
        typologies: kept.typologyScores as unknown as Record<string, TypologyScore>,
      };
    }
    if (evaluation.decision !== 'pass') {
      log.info(
        { evaluationId: kept.id, movementKind: movement.kind, movementId: movement.id, decision: evaluation.decision },
        'monitoring alert',
      );
    }
    return {
      evaluationId: kept.id,
      ruleSetVersion: evaluation.ruleSetVersion,
      decision: evaluation.decision,
      results: evaluation.results,
      typologies: evaluation.typologies,
    };
  }
}

export interface MonitoringRulesView {
  /** The version: each change adds one. */
  version: number;
  /** Who wrote it; null for the default stored on first use. */
  created_by: string | null;
  created_at: string;
  parameters: RuleParametersDocument;
  typologies: TypologyDocument[];
}

export interface MonitoringRulesChange {
  /**
   * The version the change was made from (`version` of the rules read): a change made from an older version
   * is refused with 409, so two officers never overwrite each other unseen.
   * @isInt
   * @minimum 1
   * @maximum 2147483647
   */
  based_on_version: number;
  parameters: RuleParametersDocument;
  /**
   * @minItems 1
   * @maxItems 50
   */
  typologies: TypologyDocument[];
}

const rulesView = (r: RuleSet & { createdBy: string | null; createdAt: Date }): MonitoringRulesView => ({
  version: r.version,
  created_by: r.createdBy,
  created_at: r.createdAt.toISOString(),
  parameters: r.parameters,
  typologies: r.typologies,
});

const requireStaff = (caller: Caller): void => {
  if (caller.key || !isStaff(caller))
    throw new AppError('forbidden', 'monitoring rules are read and changed by compliance staff, signed in');
};

/** The current monitoring rules, for compliance staff. */
export async function getMonitoringRules(caller: Caller): Promise<MonitoringRulesView> {
  requireStaff(caller);
  return rulesView(await currentRules());
}

/**
 * Change the rules: a new version, audited (`monitoring_rule.changed`, before and after) in the same
 * transaction. Evaluations from then on use it; stored evaluations keep theirs.
 */
export async function changeMonitoringRules(caller: Caller, change: MonitoringRulesChange): Promise<MonitoringRulesView> {
  requireStaff(caller);
  const content: unknown = { parameters: change.parameters, typologies: change.typologies };
  const problems = ruleSetProblems(content);
  if (problems.length > 0) {
    throw new AppError('validation_failed', problems.map((p) => `${p.field}: ${p.message}`).join('; '), { errors: problems });
  }
  const parsed: RuleSetContent = parseRuleSet(content);
  const changed = await inTransaction(async (tx) => {
    const before = await currentRules(tx);
    if (change.based_on_version !== before.version) return null;
    const version = before.version + 1;
    if (!(await insertRuleSet(version, parsed, caller.id, tx))) return null;
    await recordStaffAction(tx, {
      by: caller,
      action: 'monitoring_rule.changed',
      subjectType: 'monitoring_rule',
      subjectId: String(version),
      before: { version: before.version, parameters: before.parameters, typologies: before.typologies },
      after: { version, ...parsed },
    });
    return currentRules(tx);
  });
  if (!changed) throw new AppError('conflict', 'the rules changed since the version this change was made from; read them again');
  keptRules = undefined;
  return rulesView(changed);
}
