import { ApplicationFailure } from '@temporalio/activity';
import { Order } from '../../models';
import { RailError, type RailAccepted, type RailConnector, type RailSubmission } from '../../domain/connectors';

/**
 * Submit a transfer to its rail and record the rail's reference on the order. A RailError becomes the
 * failure type the workflows' retry presets know: `RailUnavailable` is retried, `RailRejected` is final.
 */
export async function submitAndRecord(connector: RailConnector, submission: RailSubmission): Promise<RailAccepted> {
  try {
    // Recorded before the rail can answer: a callback is taken only for an order of the rail that sends it.
    await Order.update({ rail: connector.name, updatedAt: new Date() }, { where: { id: submission.orderId } });
    const accepted = await connector.submit(submission);
    await Order.update({ railReference: accepted.reference, updatedAt: new Date() }, { where: { id: submission.orderId } });
    return accepted;
  } catch (err) {
    if (err instanceof RailError) {
      const details = { failureCode: err.failureCode, providerCode: err.providerCode };
      throw err.retryable
        ? ApplicationFailure.retryable(err.message, 'RailUnavailable', details)
        : ApplicationFailure.nonRetryable(err.message, 'RailRejected', details);
    }
    throw err;
  }
}
