import { ApplicationFailure } from '@temporalio/activity';
import { RailError, type RailAccepted, type RailConnector, type RailSubmission } from '../../connectors';
import { recordRail, recordRailReference } from '../../repositories/orders';
import { RAIL_REJECTED, RAIL_UNAVAILABLE } from '../failure-types';

/**
 * Submit a transfer to its rail and record the rail's reference on the order. A RailError becomes the
 * failure type the workflows' retry presets know: `RailUnavailable` is retried, `RailRejected` is final.
 */
export async function submitAndRecord(connector: RailConnector, submission: RailSubmission): Promise<RailAccepted> {
  try {
    // Recorded before the rail can answer: a callback is taken only for an order of the rail that sends it.
    await recordRail(submission.orderId, connector.name);
    const accepted = await connector.submit(submission);
    await recordRailReference(submission.orderId, accepted.reference);
    return accepted;
  } catch (err) {
    if (err instanceof RailError) {
      const details = { failureCode: err.failureCode, providerCode: err.providerCode };
      throw err.retryable
        ? ApplicationFailure.retryable(err.message, RAIL_UNAVAILABLE, details)
        : ApplicationFailure.nonRetryable(err.message, RAIL_REJECTED, details);
    }
    throw err;
  }
}
