import { randomUUID } from 'node:crypto';
import type { RuleResults } from '../../domain/monitoring/rules';
import { insertEvaluationIfCurrent } from '../../repositories/monitoring';
import { fileAlert } from '../../services/cases-service';
import { currentRules } from '../../services/monitoring-service';

/** An open case about `customerId`, filed from a stored `review` evaluation: an object for the authorisation matrices to name. */
export async function openCaseAbout(customerId: string): Promise<string> {
  const rules = await currentRules();
  const evaluation = await insertEvaluationIfCurrent(
    { kind: 'deposit', id: randomUUID(), customerId, amountMinor: 1n, at: new Date(), counterparty: null },
    { ruleSetVersion: rules.version, results: {} as RuleResults, typologies: {}, decision: 'review' },
  );
  if (!evaluation) throw new Error('the rules changed while the case was being opened');
  const caseId = await fileAlert(undefined, evaluation);
  if (!caseId) throw new Error('a review evaluation files a case');
  return caseId;
}
