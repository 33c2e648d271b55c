import type { Request as ExpressRequest } from 'express';
import {
  Body,
  Controller,
  Get,
  Header,
  Path,
  Post,
  Query,
  Request,
  Response,
  Route,
  Security,
  SuccessResponse,
  Tags,
  OperationId,
  Example,
} from 'tsoa';
import { orderReadAhead, type Caller } from '../auth/authentication';
import { routeClaim, type StoredAnswer } from '../middleware/idempotency';
import type { Problem } from '../problem';
import type { CurrencyCode, OrderStatusName, PaymentMethodName, Uuid } from '../schema-types';
import {
  getOrder,
  initiatePayment,
  paymentHistory,
  type OrderSummary,
  type OrderView,
  type PaymentAccepted,
} from '../../services/payment-service';
import type { Page } from '../../services/paging';

/**
 * Where the money goes; the fields depend on `method`:
 * - `bank_transfer`: `bank_code`, `account_number`, `account_name`
 * - `mobile_money`: `provider` (`mpesa` | `airtel_money`), `phone` (E.164 Kenyan number)
 * - `crypto`: `exchange_id` and `account_ref`, or `address` and `network`
 * - `p2p`: `ad_id`, `payment_method`
 * @example { "provider": "mpesa", "phone": "+254712345678" }
 */
export interface PaymentDestination {
  /** @maxLength 20 */
  bank_code?: string;
  /** @maxLength 40 */
  account_number?: string;
  /** @maxLength 200 */
  account_name?: string;
  /** @maxLength 20 */
  provider?: string;
  /** @maxLength 20 */
  phone?: string;
  /** @maxLength 64 */
  exchange_id?: string;
  /** @maxLength 120 */
  account_ref?: string;
  /** @maxLength 500 */
  address?: string;
  /** @maxLength 20 */
  network?: string;
  /** @maxLength 36 */
  ad_id?: string;
  /** @maxLength 20 */
  payment_method?: string;
}

export interface InitiatePaymentBody {
  /**
   * Decimal string with the currency's scale: `"1500.00"` KES/USD, `"25.500000"` USDT, `"0.00150000"` BTC.
   * Sandbox: an amount whose first two decimals are `13` fails with `insufficient_funds`.
   * @example "1500.00"
   * @maxLength 64
   */
  amount: string;
  /**
   * KES, USD (bank_transfer), USDT, USDC, BTC, ETH (crypto).
   * @example "KES"
   * @maxLength 10
   */
  currency: string;
  /**
   * `bank_transfer`, `mobile_money`, `crypto` or `p2p`.
   * @example "mobile_money"
   * @maxLength 20
   */
  method: string;
  destination: PaymentDestination;
  /**
   * @example "Invoice 42"
   * @maxLength 500
   */
  description?: string;
  /**
   * The client's own reference.
   * @example "INV-42"
   * @maxLength 100
   */
  reference?: string;
}

/**
 * The answer to an accepted payment, as sent and as stored with the order for its Idempotency-Key to replay
 * (docs/conventions.md#idempotency): the route sends `accepted` as JSON (`res.json`: `JSON.stringify`, the app
 * sets no replacer nor spacing), with this status and `Location`.
 */
function acceptedAnswer(accepted: PaymentAccepted): StoredAnswer {
  return {
    status: 202,
    headers: { 'content-type': 'application/json; charset=utf-8', location: accepted.links.self },
    body: JSON.stringify(accepted),
  };
}

@Route('payments')
@Tags('Payments')
@Security('jwt')
export class PaymentsController extends Controller {
  /**
   * Accept a payment and start its workflow (`payment-<order_id>`); poll the order for the outcome.
   * Sandbox magic values: account number ending `0000` → `account_not_found`; phone `+254700000999` → no
   * callback (settled by polling); phone `+254700001032` → `cancelled_by_user` (also 1, 1037, 2001);
   * exchange `sandbox_maintenance` → retried, then `exchange_unavailable`.
   * @param idempotencyKey 1 to 255 visible ASCII characters, e.g. a UUID; a repeat replays the first answer
   * @pattern idempotencyKey ^[!-~]{1,255}$
   * @summary Initiate a payment
   * @maxLength idempotencyKey 255
   */
  @Post('initiate')
  @SuccessResponse(202, 'Accepted')
  @Response<Problem>(400, 'Validation failed or Idempotency-Key missing')
  @Response<Problem>(409, 'Same Idempotency-Key still in progress')
  @Response<Problem>(422, 'kyc_required, limit_exceeded or idempotency_key_reused')
  @Example<PaymentAccepted>({
    order_id: '01a205e7-cb20-7233-b0b2-3ad4a6f91819',
    status: 'pending',
    workflow_id: 'payment-01a205e7-cb20-7233-b0b2-3ad4a6f91819',
    links: { self: '/api/v1/payments/orders/01a205e7-cb20-7233-b0b2-3ad4a6f91819' },
  })
  @OperationId('initiatePayment')
  public async initiate(
    @Body() body: InitiatePaymentBody,
    @Header('Idempotency-Key') idempotencyKey: string,
    @Request() req: ExpressRequest & { user: Caller },
  ): Promise<PaymentAccepted> {
    const claim = routeClaim(req);
    const accepted = await initiatePayment(req.user, body, idempotencyKey, claim && { claim, answer: acceptedAnswer });
    const answer = acceptedAnswer(accepted);
    this.setStatus(answer.status);
    this.setHeader('Location', answer.headers.location);
    return accepted;
  }

  /**
   * One order with its status, failure, rail reference, workflow id and events. Others' orders are 404.
   * @summary Get a payment order
   */
  @Get('orders/{order_id}')
  @Response<Problem>(400, 'Malformed order id')
  @Response<Problem>(404, 'Not found')
  @Example<OrderView>({
    order_id: '01a205e7-cb20-7233-b0b2-3ad4a6f91819',
    user_id: '01a205e0-11aa-7bbb-8ccc-0123456789ab',
    status: 'completed',
    amount: '1500.00',
    fee: '0.00',
    total_debited: '1500.00',
    currency: 'KES',
    method: 'mobile_money',
    destination: { provider: 'mpesa', phone: '+254712******78' },
    description: 'Invoice 42',
    reference: 'INV-42',
    failure_code: null,
    failure_reason: null,
    rail_reference: 'SBX-2Q9X7K',
    route: null,
    workflow_id: 'payment-01a205e7-cb20-7233-b0b2-3ad4a6f91819',
    created_at: '2026-11-25T10:00:00.000Z',
    updated_at: '2026-11-25T10:00:01.200Z',
    links: { self: '/api/v1/payments/orders/01a205e7-cb20-7233-b0b2-3ad4a6f91819' },
    events: [
      { status: 'pending', at: '2026-11-25T10:00:00.000Z', detail: null },
      { status: 'processing', at: '2026-11-25T10:00:00.300Z', detail: 'funds held' },
      { status: 'completed', at: '2026-11-25T10:00:01.200Z', detail: 'settled by the rail' },
    ],
  })
  @OperationId('getPaymentOrder')
  public async getOrder(@Path('order_id') orderId: Uuid, @Request() req: ExpressRequest & { user: Caller }): Promise<OrderView> {
    return getOrder(req.user, orderId, orderReadAhead(req, orderId));
  }

  /**
   * The caller's orders, newest first. Compliance and admin see everyone's, or one user's with `user_id`.
   * @param limit 1 to 100, default 20
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   * @param cursor `next_cursor` of the previous page
   * @param from RFC 3339, inclusive
   * @param to RFC 3339, exclusive
   * @summary List payment history
   * @maxLength cursor 200
   * @maxLength from 40
   * @maxLength to 40
   */
  @Get('history')
  @Response<Problem>(400, 'Bad filter')
  @OperationId('listPaymentHistory')
  public async history(
    @Request() req: ExpressRequest & { user: Caller },
    @Query() limit?: number,
    @Query() cursor?: string,
    @Query() status?: OrderStatusName,
    @Query() method?: PaymentMethodName,
    @Query() currency?: CurrencyCode,
    @Query() from?: string,
    @Query() to?: string,
    @Query() user_id?: Uuid,
  ): Promise<Page<OrderSummary>> {
    return paymentHistory(req.user, { limit, cursor, status, method, currency, from, to, user_id });
  }
}
