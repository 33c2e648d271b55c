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
import { logProviderText, withoutProviderText } from '../../connectors/provider-http';
import { recordDepositRailReference } from '../../repositories/deposits';
import {
  beginRailSubmission,
  nextRailSerial,
  recordRailAcceptance,
  recordRailSubmission,
  type RailSubmissionState,
} from '../../repositories/orders';
import { RAIL_OUTCOME_UNKNOWN, RAIL_REJECTED, RAIL_UNAVAILABLE } from '../failure-types';
import { railRequestByReference, railRequestOf, recordRailRequest, recordStatusQuery, resolveRailRequest } from '../../repositories/rails';
import { inTransaction, type Tx } from '../../repositories/transaction';

/** What the rail accepted, recorded in `tx`: the request it will answer later, when there is one. */
async function recordAccepted(rail: string, orderId: string, accepted: RailAccepted, tx: Tx): Promise<void> {
  if (accepted.request) await recordRailRequest({ rail, orderId, ...accepted.request }, tx);
}

/**
 * Submit a transfer to its rail: record the intent, send, record the answer (docs/payments.md#unknown-outcomes).
 *
 * Before the request leaves, the order records its rail (a callback is taken only for an order of the rail
 * that sends it, and one may come before the answer is recorded), the reference the rail will see (chosen
 * once, the same on every resubmission) and that a request is `sending`. The answer is recorded in one
 * transaction: the rail's reference and the request it will answer later. What a failure tells decides the
 * rest: a definite refusal of the first request is the transfer's failure; a lost answer (a timeout, a
 * dropped connection, a 5xx) stays `sending` and is retried with the same reference; a refusal as a duplicate,
 * or any refusal after an earlier request's outcome was lost, is `RailOutcomeUnknown`: the rail is then asked.
 */
export async function submitAndRecord(connector: Payouts, submission: RailSubmission): Promise<RailAccepted> {
  const { orderId } = submission;
  let previous: RailSubmissionState | null = null;
  try {
    const intent = await recordIntent(connector, orderId);
    previous = intent.previous;
    const accepted = await withProviderTextLogged(connector.name, orderId, () =>
      connector.submit({ ...submission, reference: intent.reference }),
    );
    // One statement when the rail keeps no request of ours to answer later (most do not); with one, both together.
    if (accepted.request) {
      await inTransaction(async (tx) => {
        await recordRailAcceptance(orderId, accepted.reference, tx);
        await recordAccepted(connector.name, orderId, accepted, tx);
      });
    } else {
      await recordRailAcceptance(orderId, accepted.reference);
    }
    return { reference: accepted.reference };
  } catch (err) {
    if (!(err instanceof RailError)) throw err;
    // An earlier request whose outcome was lost may have been executed: a refusal now says nothing of it.
    const earlierUnknown = previous === 'sending';
    if (err.outcome === 'duplicate' || (err.outcome === 'refused' && earlierUnknown && !err.retryable)) {
      throw ApplicationFailure.nonRetryable(err.message, RAIL_OUTCOME_UNKNOWN, {
        failureCode: err.failureCode,
        providerCode: err.providerCode,
      });
    }
    if (err.outcome === 'refused' && !earlierUnknown) await recordRailSubmission(orderId, 'refused');
    throw railFailure(err);
  }
}

/**
 * The order's rail, the reference the rail will see and `sending`, recorded before a request leaves. The
 * reference is the connector's own format over a number never handed out before, else the order id; one
 * another order already holds on the rail (an order from before the numbers) is passed over.
 */
async function recordIntent(connector: Payouts, orderId: string): Promise<{ reference: string; previous: RailSubmissionState | null }> {
  for (let attempt = 0; ; attempt++) {
    const reference = connector.clientReference ? connector.clientReference(orderId, await nextRailSerial()) : orderId;
    try {
      return await beginRailSubmission(orderId, connector.name, reference);
    } catch (err) {
      if (attempt < 5 && isUniqueViolation(err)) continue;
      throw err;
    }
  }
}

const isUniqueViolation = (err: unknown): boolean =>
  (err as { code?: string }).code === '23505' || (err as { original?: { code?: string } }).original?.code === '23505';

/** A rail call whose refusal, if it is one, has the rail's own words logged with the order (docs/conventions.md#errors). */
async function withProviderTextLogged<T>(rail: string, orderId: string | undefined, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof RailError) logProviderText(rail, orderId, err);
    throw err;
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
  const accepted = await withProviderTextLogged(collections.name, submission.orderId, () => collections.collect(submission));
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
export async function askRail(
  connector: StatusQueries,
  reference: string,
  hint: RailStatusHint & { orderId?: string } = {},
): Promise<RailStatus> {
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
  const { orderId: _orderId, ...asked } = hint;
  const orderOfRequest = request?.orderId ?? hint.orderId;
  const answer = await withProviderTextLogged(connector.name, orderOfRequest, () =>
    connector.status(reference, { ...asked, ...(request ? { request } : {}) }),
  );
  const { facts, ...status } = withoutProviderText(connector.name, orderOfRequest, answer);
  if (facts && 'result' in facts && status.state !== 'pending') {
    await resolveRailRequest({ rail: connector.name, providerReference: reference }, { status: status.state, ...facts.result });
  } else if (facts && 'statusQuery' in facts) {
    if (facts.request && !request && orderOfRequest)
      await recordRailRequest({ rail: connector.name, orderId: orderOfRequest, ...facts.request });
    if (orderOfRequest) await recordStatusQuery({ rail: connector.name, orderId: orderOfRequest, ...facts.statusQuery });
  }
  return status;
}
