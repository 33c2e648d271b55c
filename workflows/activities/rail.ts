import { ApplicationFailure } from '@temporalio/activity';
import {
  RailError,
  type Collections,
  type Payouts,
  type RailAccepted,
  type RailStatus,
  type RailStatusHint,
  type RailSubmission,
  type StatusQueries,
} from '../../connectors';
import { recordDepositRailReference } from '../../repositories/deposits';
import { recordRail, recordRailReference } from '../../repositories/orders';
import { RAIL_REJECTED, RAIL_UNAVAILABLE } from '../failure-types';
import { railRequestByReference, railRequestOf, recordRailRequest, recordStatusQuery, resolveRailRequest } from '../../repositories/rails';
import { inTransaction, type Tx } from '../../repositories/transaction';

/** What the rail accepted, recorded in `tx`: the request it will answer later, when there is one. */
async function recordAccepted(rail: string, orderId: string, accepted: RailAccepted, tx: Tx): Promise<void> {
  if (accepted.request) await recordRailRequest({ rail, orderId, ...accepted.request }, tx);
}

/**
 * Submit a transfer to its rail, then record in one transaction the rail's reference on the order and the
 * request the rail will answer later. The rail itself is recorded before it is asked: a callback is taken
 * only for an order of the rail that sends it, and one may come before the submission's answer is recorded.
 * A RailError becomes a failure the workflows' retry presets know (`railFailure`).
 */
export async function submitAndRecord(connector: Payouts, submission: RailSubmission): Promise<RailAccepted> {
  try {
    await recordRail(submission.orderId, connector.name);
    const accepted = await connector.submit(submission);
    await inTransaction(async (tx) => {
      await recordRailReference(submission.orderId, accepted.reference, tx);
      await recordAccepted(connector.name, submission.orderId, accepted, tx);
    });
    return { reference: accepted.reference };
  } catch (err) {
    throw railFailure(err);
  }
}

/**
 * A RailError as the failure types the workflows' retry presets know: `RailUnavailable` is retried,
 * `RailRejected` is final. Anything else goes on as it is.
 */
export function railFailure(err: unknown): unknown {
  if (!(err instanceof RailError)) return err;
  const details = { failureCode: err.failureCode, providerCode: err.providerCode };
  return err.retryable
    ? ApplicationFailure.retryable(err.message, RAIL_UNAVAILABLE, details)
    : ApplicationFailure.nonRetryable(err.message, RAIL_REJECTED, details);
}

/**
 * Ask a payer's phone to pay (the submission's order id is the deposit's), recorded as `submitAndRecord`
 * records a payout. A collection already recorded for the deposit is not asked again: a second push would
 * ask the payer twice.
 */
export async function collectAndRecord(collections: Collections, submission: RailSubmission): Promise<RailAccepted> {
  const known = await railRequestOf(collections.name, submission.orderId);
  if (known) return { reference: known.provider_reference };
  const accepted = await collections.collect(submission);
  await inTransaction(async (tx) => {
    await recordDepositRailReference(submission.orderId, accepted.reference, tx);
    await recordAccepted(collections.name, submission.orderId, accepted, tx);
  });
  return { reference: accepted.reference };
}

/**
 * What the rail says of a transfer now, told what we recorded of its request (a rail that answers later
 * needs it), and with what the answer taught recorded: the request's result, or the status query the rail
 * will answer at our URL. Only the state goes back to the workflow.
 */
export async function askRail(connector: StatusQueries, reference: string, hint: RailStatusHint = {}): Promise<RailStatus> {
  const row = await railRequestByReference(connector.name, reference);
  const request = row && {
    orderId: row.order_id,
    kind: row.kind,
    providerReference: row.provider_reference,
    merchantReference: row.merchant_reference,
    status: row.status,
    resultCode: row.result_code,
    resultDesc: row.result_desc,
  };
  const { facts, ...status } = await connector.status(reference, { ...hint, ...(request ? { request } : {}) });
  if (facts && 'result' in facts && status.state !== 'pending') {
    await resolveRailRequest({ rail: connector.name, providerReference: reference }, { status: status.state, ...facts.result });
  } else if (facts && 'statusQuery' in facts && request) {
    await recordStatusQuery({ rail: connector.name, orderId: request.orderId, ...facts.statusQuery });
  }
  return status;
}
