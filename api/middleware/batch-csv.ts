import express, { type RequestHandler } from 'express';
import { parseBatchCsv } from '../../domain/payout-batch-csv';
import { MAX_BATCH_ITEMS } from '../../services/payout-batch-service';

/**
 * A bulk payout uploaded as `text/csv` (docs/payments.md#a-batch-as-csv): the body is read as text within the
 * batch's own limit, and its rows become the `items` of the JSON body the route takes, with `skip_invalid`
 * from the query. Everything after (the idempotency fingerprint, validation, the service) sees one body
 * whichever way it came.
 */

/**
 * A bulk payout body of either kind. 10,000 items measured: M-Pesa payouts 1.9 MB as JSON, 1.0 MB as CSV; bank
 * transfers with a 60-character description 3.2 MB as JSON, 2.0 MB as CSV.
 */
export const BATCH_BODY_LIMIT = '5mb';

const readCsv = express.text({
  type: 'text/csv',
  limit: BATCH_BODY_LIMIT,
  verify: (req, _res, buf) => {
    (req as { rawBody?: Buffer }).rawBody = buf;
  },
});

/** `skip_invalid` from the query, when it is a boolean; anything else is left for the route to refuse. */
function skipInvalid(value: unknown): { skip_invalid?: boolean } {
  if (value === 'true') return { skip_invalid: true };
  if (value === 'false') return { skip_invalid: false };
  return {};
}

export const batchCsv: RequestHandler = (req, res, next) => {
  if (req.method !== 'POST' || req.path !== '/' || !req.is('text/csv')) return next();
  readCsv(req, res, (err?: unknown) => {
    if (err) return next(err);
    if (typeof req.body !== 'string') return next();
    try {
      req.body = { items: parseBatchCsv(req.body, MAX_BATCH_ITEMS), ...skipInvalid(req.query.skip_invalid) };
    } catch (parseErr) {
      return next(parseErr);
    }
    next();
  });
};
