import { Readable } from 'node:stream';
import type { Request as ExpressRequest } from 'express';
import {
  Body,
  Controller,
  Example,
  Get,
  Header,
  OperationId,
  Path,
  Post,
  Produces,
  Query,
  Request,
  Response,
  Route,
  Security,
  SuccessResponse,
  Tags,
} from 'tsoa';
import type { Caller } from '../auth/authentication';
import type { Problem } from '../problem';
import { validationError } from '../../platform/errors';
import type { Uuid } from '../schema-types';
import type { PaymentDestination } from './payments-controller';
import {
  cancelPayoutBatch,
  createPayoutBatch,
  getPayoutBatch,
  listPayoutBatches,
  payoutBatchItems,
  payoutBatchResultsCsv,
  type PayoutBatchAccepted,
  type PayoutBatchItemView,
  type PayoutBatchSummary,
  type PayoutBatchView,
} from '../../services/payout-batch-service';
import type { Page } from '../../services/paging';

/**
 * One payout of a batch: an initiate body (`POST /payments/initiate`) plus the client's own `reference`,
 * unique within the batch. Every field is checked per item, so a missing one is named by its row.
 */
interface PayoutBatchItemBody {
  /**
   * The client's own reference for this item, unique within the batch: 1 to 100 printable characters.
   * @example "SALARY-2026-11-0001"
   * @maxLength 100
   */
  reference?: string;
  /**
   * Decimal string with the currency's scale, e.g. `"1500.00"`.
   * @example "25000.00"
   * @maxLength 64
   */
  amount?: string;
  /**
   * Every item of a batch has the same currency (its first item's).
   * @example "KES"
   * @maxLength 10
   */
  currency?: string;
  /**
   * `bank_transfer`, `mobile_money` or `crypto`.
   * @example "mobile_money"
   * @maxLength 20
   */
  method?: string;
  destination?: PaymentDestination;
  /**
   * @example "November salary"
   * @maxLength 500
   */
  description?: string;
}

interface PayoutBatchBody {
  /**
   * 1 to 10,000 payouts. Rows are numbered from 1 in the order given.
   * @minItems 1
   * @maxItems 10000
   */
  items: PayoutBatchItemBody[];
  /** Accept the valid items and leave out the invalid ones (listed in `skipped`) instead of refusing the batch. */
  skip_invalid?: boolean;
}

@Route('payouts/batches')
@Tags('Payouts')
@Security('jwt')
export class PayoutsController extends Controller {
  /**
   * Accept a bulk payout (docs/payments.md#bulk-payouts): every item is checked first, as a single payout is, and
   * a batch with any invalid item is refused whole — a 400 naming each by row and field (`rows[3].amount`) —
   * unless `skip_invalid` is true. An accepted batch holds its total and fees from the wallet in one posting
   * (422 `insufficient_funds`, nothing held, when the wallet is short) and its workflow `payout-batch-<batch_id>`
   * pays each item once, as its own order. A batch whose total and fees reach `FOUR_EYES_ABOVE_KES` (KES
   * equivalent, at or above) is held the same way but answers `awaiting_approval`, with its
   * `approval_request_id`: nothing is sent until a second staff member approves it.
   *
   * The same batch may be uploaded as `text/csv` (docs/payments.md#a-batch-as-csv): a header naming the columns
   * (`reference`, `amount`, `currency`, `method` required; `description` and the destination's fields as
   * `destination.phone`, `destination.bank_code`… as the items' methods need), then one item per row, numbered
   * from 1 after the header; an empty cell is an absent field. An unknown, repeated or missing column is a 400
   * naming it (`header.<column>`).
   * @param skipInvalid For a CSV upload (a JSON body says it in its own `skip_invalid`): accept the valid rows and leave out the invalid ones.
   * @param idempotencyKey 1 to 255 visible ASCII characters, e.g. a UUID; a repeat replays the first answer
   * @pattern idempotencyKey ^[!-~]{1,255}$
   * @maxLength idempotencyKey 255
   * @summary Create a bulk payout
   */
  @Post()
  @SuccessResponse(202, 'Accepted')
  @Response<Problem>(400, 'An invalid item (each named by row and field), or Idempotency-Key missing')
  @Response<Problem>(409, 'Same Idempotency-Key still in progress')
  @Response<Problem>(413, 'Body larger than 5 MB')
  @Response<Problem>(422, 'insufficient_funds (nothing held) or idempotency_key_reused')
  @Example<PayoutBatchAccepted>({
    batch_id: '01a20610-5c3e-7d11-9e2a-77c0c1f0b7aa',
    status: 'running',
    currency: 'KES',
    item_count: 3,
    skipped_count: 0,
    total_amount: '75000.00',
    total_fee: '0.00',
    counts: { pending: 3, sent: 0, completed: 0, failed: 0, rejected: 0, cancelled: 0 },
    sent_amount: '0.00',
    failed_amount: '0.00',
    cancelled_amount: '0.00',
    returned_amount: '0.00',
    progress: 0,
    cancel_requested: false,
    approval_request_id: null,
    workflow_id: 'payout-batch-01a20610-5c3e-7d11-9e2a-77c0c1f0b7aa',
    created_at: '2026-11-28T06:00:00.000Z',
    finished_at: null,
    links: {
      self: '/api/v1/payouts/batches/01a20610-5c3e-7d11-9e2a-77c0c1f0b7aa',
      items: '/api/v1/payouts/batches/01a20610-5c3e-7d11-9e2a-77c0c1f0b7aa/items',
    },
    skipped: [],
  })
  @OperationId('createPayoutBatch')
  public async create(
    @Body() body: PayoutBatchBody,
    @Header('Idempotency-Key') idempotencyKey: string,
    @Request() req: ExpressRequest & { user: Caller },
    @Query('skip_invalid') skipInvalid?: boolean,
  ): Promise<PayoutBatchAccepted> {
    // A CSV upload's `skip_invalid` is already in its body (api/middleware/batch-csv.ts), within its idempotency fingerprint.
    if (skipInvalid !== undefined && !req.is('text/csv'))
      throw validationError('skip_invalid', 'is the query parameter of a CSV upload; a JSON body says it in its own `skip_invalid`');
    const accepted = await createPayoutBatch(req.user, body, idempotencyKey);
    this.setStatus(202);
    this.setHeader('Location', accepted.links.self);
    return accepted;
  }

  /**
   * A batch: counts of its items by status, money sent, failed and returned, and progress (0 to 1). Others'
   * batches are 404.
   * @summary Get a bulk payout
   */
  @Get('{batch_id}')
  @Response<Problem>(400, 'Malformed batch id')
  @Response<Problem>(404, 'Not found')
  @Example<PayoutBatchView>({
    batch_id: '01a20610-5c3e-7d11-9e2a-77c0c1f0b7aa',
    status: 'running',
    currency: 'KES',
    item_count: 3,
    skipped_count: 0,
    total_amount: '75000.00',
    total_fee: '0.00',
    counts: { pending: 1, sent: 1, completed: 1, failed: 0, rejected: 0, cancelled: 0 },
    sent_amount: '25000.00',
    failed_amount: '0.00',
    cancelled_amount: '0.00',
    returned_amount: '0.00',
    progress: 0.3333,
    cancel_requested: false,
    approval_request_id: null,
    workflow_id: 'payout-batch-01a20610-5c3e-7d11-9e2a-77c0c1f0b7aa',
    created_at: '2026-11-28T06:00:00.000Z',
    finished_at: null,
    links: {
      self: '/api/v1/payouts/batches/01a20610-5c3e-7d11-9e2a-77c0c1f0b7aa',
      items: '/api/v1/payouts/batches/01a20610-5c3e-7d11-9e2a-77c0c1f0b7aa/items',
    },
  })
  @OperationId('getPayoutBatch')
  public async get(@Path('batch_id') batchId: Uuid, @Request() req: ExpressRequest & { user: Caller }): Promise<PayoutBatchView> {
    return getPayoutBatch(req.user, batchId);
  }

  /**
   * A batch's items in row order, each with its status and order.
   * @param limit 1 to 100, default 20
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   * @param cursor `next_cursor` of the previous page
   * @param status `pending`, `sent`, `completed`, `failed`, `rejected` or `cancelled`
   * @param reference the client's reference of one item
   * @maxLength cursor 200
   * @maxLength status 20
   * @maxLength reference 100
   * @summary List a bulk payout's items
   */
  @Get('{batch_id}/items')
  @Response<Problem>(400, 'Bad filter or cursor')
  @Response<Problem>(404, 'Not found')
  @Example<Page<PayoutBatchItemView>>({
    data: [
      {
        row: 1,
        reference: 'SALARY-2026-11-0001',
        status: 'completed',
        method: 'mobile_money',
        amount: '25000.00',
        fee: '0.00',
        destination: { provider: 'mpesa', phone: '+254712345678' },
        order_id: '01a205e7-cb20-7233-b0b2-3ad4a6f91819',
        failure_code: null,
        updated_at: '2026-11-28T06:00:02.000Z',
        links: { order: '/api/v1/payments/orders/01a205e7-cb20-7233-b0b2-3ad4a6f91819' },
      },
    ],
    next_cursor: null,
  })
  @OperationId('listPayoutBatchItems')
  public async items(
    @Path('batch_id') batchId: Uuid,
    @Request() req: ExpressRequest & { user: Caller },
    @Query() limit?: number,
    @Query() cursor?: string,
    @Query() status?: string,
    @Query() reference?: string,
  ): Promise<Page<PayoutBatchItemView>> {
    return payoutBatchItems(req.user, batchId, { limit, cursor, status, reference });
  }

  /**
   * A batch's results as CSV, one line per item in row order after the header
   * `row,reference,status,amount,fee,order_id,failure_code,updated_at` (docs/payments.md#a-batch-as-csv). A text
   * cell a spreadsheet would take for a formula (`=`, `+`, `-`, `@`) starts with `'`. Others' batches are 404.
   * @summary Download a bulk payout's results as CSV
   */
  @Get('{batch_id}/results.csv')
  @Produces('text/csv')
  @Response<Problem>(400, 'Malformed batch id')
  @Response<Problem>(404, 'Not found')
  @OperationId('getPayoutBatchResultsCsv')
  public async results(@Path('batch_id') batchId: Uuid, @Request() req: ExpressRequest & { user: Caller }): Promise<Readable> {
    const { filename, lines } = await payoutBatchResultsCsv(req.user, batchId);
    this.setHeader('Content-Type', 'text/csv; charset=utf-8');
    this.setHeader('Content-Disposition', `attachment; filename="${filename}"`);
    return Readable.from(lines);
  }

  /**
   * Stop a batch: items not yet sent are cancelled and their money, with their fees, goes back to the wallet
   * when the batch ends; items in flight finish. A batch awaiting approval is cancelled at once, its whole hold
   * back in the wallet. Asking again, or once the batch has ended, answers the batch as
   * it stands.
   * @summary Cancel a bulk payout
   */
  @Post('{batch_id}/cancel')
  @Response<Problem>(400, 'Malformed batch id')
  @Response<Problem>(403, 'Not the batch’s owner')
  @Response<Problem>(404, 'Not found')
  @Example<PayoutBatchView>({
    batch_id: '01a20610-5c3e-7d11-9e2a-77c0c1f0b7aa',
    status: 'running',
    currency: 'KES',
    item_count: 3,
    skipped_count: 0,
    total_amount: '75000.00',
    total_fee: '0.00',
    counts: { pending: 1, sent: 1, completed: 1, failed: 0, rejected: 0, cancelled: 0 },
    sent_amount: '25000.00',
    failed_amount: '0.00',
    cancelled_amount: '0.00',
    returned_amount: '0.00',
    progress: 0.3333,
    cancel_requested: true,
    approval_request_id: null,
    workflow_id: 'payout-batch-01a20610-5c3e-7d11-9e2a-77c0c1f0b7aa',
    created_at: '2026-11-28T06:00:00.000Z',
    finished_at: null,
    links: {
      self: '/api/v1/payouts/batches/01a20610-5c3e-7d11-9e2a-77c0c1f0b7aa',
      items: '/api/v1/payouts/batches/01a20610-5c3e-7d11-9e2a-77c0c1f0b7aa/items',
    },
  })
  @OperationId('cancelPayoutBatch')
  public async cancel(@Path('batch_id') batchId: Uuid, @Request() req: ExpressRequest & { user: Caller }): Promise<PayoutBatchView> {
    return cancelPayoutBatch(req.user, batchId);
  }

  /**
   * The caller's own bulk payouts, newest first; `status=awaiting_approval` lists those waiting for a staff
   * member's approval. Each batch's counts and money are on `GET /payouts/batches/{batch_id}`.
   * @param status `awaiting_approval`, `running`, `completed` or `cancelled`
   * @param limit 1 to 100, default 20
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   * @param cursor `next_cursor` of the previous page
   * @maxLength cursor 200
   * @summary List bulk payouts
   */
  @Get()
  @Response<Problem>(400, 'Bad status, limit or cursor')
  @Example<Page<PayoutBatchSummary>>({
    data: [
      {
        batch_id: '01a20610-5c3e-7d11-9e2a-77c0c1f0b7aa',
        status: 'awaiting_approval',
        currency: 'KES',
        item_count: 3,
        total_amount: '75000.00',
        total_fee: '0.00',
        cancel_requested: false,
        created_at: '2026-11-28T06:00:00.000Z',
        finished_at: null,
        links: {
          self: '/api/v1/payouts/batches/01a20610-5c3e-7d11-9e2a-77c0c1f0b7aa',
          items: '/api/v1/payouts/batches/01a20610-5c3e-7d11-9e2a-77c0c1f0b7aa/items',
        },
      },
    ],
    next_cursor: null,
  })
  @OperationId('listPayoutBatches')
  public async list(
    @Request() req: ExpressRequest & { user: Caller },
    @Query() status?: 'awaiting_approval' | 'running' | 'completed' | 'cancelled',
    @Query() limit?: number,
    @Query() cursor?: string,
  ): Promise<Page<PayoutBatchSummary>> {
    return listPayoutBatches(req.user, { status, limit, cursor });
  }
}
