import {
  ApplicationFailure,
  ParentClosePolicy,
  allHandlersFinished,
  condition,
  log,
  proxyLocalActivities,
  setHandler,
  startChild,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { AppealActivities } from './activities/appeals';
import { LOCAL_DB_STEP, withNonRetryable } from './presets';
import { CONFLICT, FORBIDDEN } from './failure-types';
import { failureOfType } from './outcome';
import { appealStatusQuery, approveAppealUpdate, rejectAppealUpdate, secondApproveAppealUpdate } from './appeal-messages';
import {
  type AppealDecided,
  type AppealDecision,
  type AppealStatus,
  type AppealWorkflowInput,
  type FirstApproval,
} from '../domain/appeals/contract';
import { PAYMENT_WORKFLOW, paymentWorkflowId, type PaymentWorkflowInput } from './shared';
import { PAYGATE_ORDER_ID, PAYGATE_STATUS, orderSearchAttributes } from './search-attributes';

/** Decisions are one short transaction in our own Postgres: local activities, like the payment's DB steps. */
const db = proxyLocalActivities<AppealActivities>(withNonRetryable(LOCAL_DB_STEP, [CONFLICT]));

const DECIDERS = ['compliance', 'admin'];

/**
 * An appeal (docs/appeals.md#the-appeal-workflow): waits for a decision — the `approve` or `reject` Update — for at most the SLA,
 * then the appeal is `expired`. An Update's validator refuses, before anything is written to the
 * history, a decider without the role, a decider who is the appellant, the order's owner or the other
 * side of the trade, and an appeal no longer open. Its handler returns once the resolution has run.
 *
 * A refund at or above `FOUR_EYES_ABOVE_KES` (docs/appeals.md#four-eyes-on-large-refunds): its first `approve`
 * only records the approval, and the appeal waits, open, for the `approve-second` Update, whose validator
 * refuses the first approver. The second approval pays the refund the first one approved.
 */
export async function appeal(input: AppealWorkflowInput): Promise<AppealDecided> {
  let status: AppealStatus = 'open';
  let deciding = false;
  let decided: AppealDecided | undefined;
  let awaiting: FirstApproval | undefined;
  setHandler(appealStatusQuery, () => status);
  // As in the payment workflow: only a run started with the search attributes upserts them.
  const tracked = carriesSearchAttributes();
  const report = (next: AppealStatus) => {
    if (tracked) upsertSearchAttributes([{ key: PAYGATE_STATUS, value: next }]);
  };

  const validate = (decision: AppealDecision): void => {
    if (!decision.deciderRoles.some((role) => DECIDERS.includes(role))) {
      throw ApplicationFailure.nonRetryable('only compliance staff or admins decide appeals', FORBIDDEN);
    }
    if ([input.appellantId, input.orderOwnerId, input.counterpartyId].includes(decision.deciderId)) {
      throw ApplicationFailure.nonRetryable('nobody decides an appeal they made or on an order of their own', FORBIDDEN);
    }
    if (status !== 'open' || deciding) {
      throw ApplicationFailure.nonRetryable(`the appeal is ${deciding ? 'being decided' : status}`, CONFLICT);
    }
  };
  const validateFirst = (decision: AppealDecision): void => {
    validate(decision);
    if (awaiting) throw ApplicationFailure.nonRetryable('the refund already awaits a second approval', CONFLICT);
  };
  const validateSecond = (decision: AppealDecision): void => {
    validate(decision);
    if (!awaiting) throw ApplicationFailure.nonRetryable('no refund of this appeal awaits a second approval', CONFLICT);
    if (decision.deciderId === awaiting.approverId) {
      throw ApplicationFailure.nonRetryable('a refund is approved a second time by a different staff member', FORBIDDEN);
    }
    if (
      (decision.action ?? awaiting.action) !== awaiting.action ||
      (decision.amountMinor ?? awaiting.amountMinor) !== awaiting.amountMinor
    ) {
      throw ApplicationFailure.nonRetryable('a second approval pays the refund approved first, unchanged', CONFLICT);
    }
  };

  const decide =
    (outcome: 'approved' | 'rejected', check: (decision: AppealDecision) => void, second = false) =>
    async (decision: AppealDecision): Promise<AppealDecided> => {
      // The validator ran; still refuse a decision that raced another one into this handler.
      check(decision);
      const first = second ? awaiting : undefined;
      deciding = true;
      try {
        const result = await db.decideAppeal({
          appealId: input.appealId,
          decision: outcome,
          deciderId: decision.deciderId,
          note: decision.note,
          ...(first
            ? { action: first.action, amountMinor: first.amountMinor, firstApproverId: first.approverId }
            : {
                action: decision.action,
                ...(decision.amountMinor !== undefined ? { amountMinor: decision.amountMinor } : {}),
              }),
          ...(decision.actor ? { actor: decision.actor } : {}),
        });
        if (result.awaitingSecondApproval) {
          // Approved once: the appeal stays open for a second staff member.
          awaiting = result.awaitingSecondApproval;
          return result;
        }
        const resubmitted = result.resolution?.resubmitted_order_id;
        if (resubmitted) await startResubmission(resubmitted, input);
        status = result.status;
        report(status);
        decided = result;
        return result;
      } catch (err) {
        const conflict = failureOfType(err, CONFLICT);
        if (conflict) throw ApplicationFailure.nonRetryable(conflict.message, CONFLICT);
        throw err;
      } finally {
        deciding = false;
      }
    };

  setHandler(approveAppealUpdate, decide('approved', validateFirst), { validator: validateFirst });
  setHandler(secondApproveAppealUpdate, decide('approved', validateSecond, true), { validator: validateSecond });
  setHandler(rejectAppealUpdate, decide('rejected', validate), { validator: validate });

  const deadline = Date.now() + input.slaMs;
  while (!decided) {
    const remaining = deadline - Date.now();
    const arrived = remaining > 0 && (await condition(() => decided !== undefined || deciding, remaining));
    if (!arrived) {
      // A decision under way when the SLA ran out still gets to finish.
      if (deciding) {
        await condition(() => !deciding);
        continue;
      }
      status = 'expired';
      await db.expireAppeal({ appealId: input.appealId });
      report(status);
      log.info('appeal expired undecided', { appealId: input.appealId });
      return { appealId: input.appealId, status, resolution: null };
    }
    await condition(() => decided !== undefined || !deciding);
  }
  await condition(allHandlersFinished);
  return decided;
}

/** Started with Paygate's search attributes: the namespace knows them. */
const carriesSearchAttributes = (): boolean => workflowInfo().typedSearchAttributes.get(PAYGATE_ORDER_ID) !== undefined;

/** Start the resubmitted payment's workflow; it outlives the appeal. Already started (reconciler) is fine. */
async function startResubmission(orderId: string, input: AppealWorkflowInput): Promise<void> {
  const args: [PaymentWorkflowInput] = [{ orderId, pollAfterMs: input.pollAfterMs, settleTimeoutMs: input.settleTimeoutMs }];
  try {
    await startChild(PAYMENT_WORKFLOW, {
      workflowId: paymentWorkflowId(orderId),
      args,
      parentClosePolicy: ParentClosePolicy.ABANDON,
      staticSummary: `resubmission of order ${input.orderId}, approved on appeal ${input.appealId}`,
      memo: { orderId, resubmittedFrom: input.orderId, appealId: input.appealId },
      // The resubmitted order belongs to the appealed order's owner, with its method; its workflow screens it again.
      ...(carriesSearchAttributes()
        ? {
            typedSearchAttributes: orderSearchAttributes({
              orderId,
              userId: input.orderOwnerId,
              method: input.orderMethod,
              status: 'screening',
            }),
          }
        : {}),
    });
  } catch (err) {
    log.warn('resubmitted payment workflow not started by the appeal', { orderId, error: String(err) });
  }
}
