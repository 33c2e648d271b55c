import type { Request as ExpressRequest } from 'express';
import { Body, Controller, Get, Header, Path, Post, Query, Request, Response, Route, Security, SuccessResponse, Tags } from 'tsoa';
import type { Caller } from '../auth/authentication';
import type { Problem } from '../problem';
import type { CurrencyCode, OrderStatusName, PaymentMethodName, Uuid } from '../schema-types';
import {
  getOrder,
  initiatePayment,
  paymentHistory,
  type OrderSummary,
  type OrderView,
  type PaymentAccepted,
} from '../services/payment-service';
import type { Page } from '../services/paging';

/**
 * Where the money goes; the fields depend on `method`:
 * - `bank_transfer`: `bank_code`, `account_number`, `account_name`
 * - `mobile_money`: `provider` (`mpesa` | `airtel_money`), `phone` (E.164 Kenyan number)
 * - `crypto`: `exchange_id` and `account_ref`, or `address` and `network`
 * - `p2p`: `ad_id`, `payment_method`
 * @example { "provider": "mpesa", "phone": "+254712345678" }
 */
interface PaymentDestination {
  bank_code?: string;
  account_number?: string;
  account_name?: string;
  provider?: string;
  phone?: string;
  exchange_id?: string;
  account_ref?: string;
  address?: string;
  network?: string;
  ad_id?: string;
  payment_method?: string;
}

interface InitiatePaymentBody {
  /**
   * Decimal string with the currency's scale: `"1500.00"` KES/USD, `"25.500000"` USDT, `"0.00150000"` BTC.
   * Sandbox: an amount whose first two decimals are `13` fails with `insufficient_funds`.
   * @example "1500.00"
   */
  amount: string;
  /**
   * KES, USD (bank_transfer), USDT, USDC, BTC, ETH (crypto).
   * @example "KES"
   */
  currency: string;
  /**
   * `bank_transfer`, `mobile_money`, `crypto` or `p2p`.
   * @example "mobile_money"
   */
  method: string;
  destination: PaymentDestination;
  /** @example "Invoice 42" */
  description?: string;
  /**
   * The client's own reference.
   * @example "INV-42"
   */
  reference?: string;
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
   */
  @Post('initiate')
  @SuccessResponse(202, 'Accepted')
  @Response<Problem>(400, 'Validation failed or Idempotency-Key missing')
  @Response<Problem>(409, 'Same Idempotency-Key still in progress')
  @Response<Problem>(422, 'kyc_required, limit_exceeded or idempotency_key_reused')
  public async initiate(
    @Body() body: InitiatePaymentBody,
    @Header('Idempotency-Key') idempotencyKey: string,
    @Request() req: ExpressRequest & { user: Caller },
  ): Promise<PaymentAccepted> {
    const accepted = await initiatePayment(req.user, body, idempotencyKey);
    this.setStatus(202);
    this.setHeader('Location', accepted.links.self);
    return accepted;
  }

  /** One order with its status, failure, rail reference, workflow id and events. Others' orders are 404. */
  @Get('orders/{order_id}')
  @Response<Problem>(400, 'Malformed order id')
  @Response<Problem>(404, 'Not found')
  public async getOrder(@Path('order_id') orderId: Uuid, @Request() req: ExpressRequest & { user: Caller }): Promise<OrderView> {
    return getOrder(req.user, orderId);
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
   */
  @Get('history')
  @Response<Problem>(400, 'Bad filter')
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
