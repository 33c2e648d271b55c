import type { Request as ExpressRequest } from 'express';
import {
  Body,
  Controller,
  Delete,
  Get,
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
} from 'tsoa';
import type { Caller } from '../auth/authentication';
import type { Problem } from '../problem';
import type { Uuid } from '../schema-types';
import type { Page } from '../../services/paging';
import {
  disableWebhookEndpoint,
  listWebhookEndpoints,
  registerWebhookEndpoint,
  retryWebhookDelivery,
  webhookDeliveries,
  type CreatedWebhookEndpoint,
  type WebhookDeliveryView,
  type WebhookEndpointView,
} from '../../services/webhook-service';

interface RegisterWebhookBody {
  /**
   * Where Paygate POSTs events. Private, loopback and link-local addresses are refused unless the
   * operator set WEBHOOKS_ALLOW_PRIVATE_TARGETS.
   * @example "https://merchant.example.com/paygate/events"
   * @maxLength 2048
   */
  url: string;
  /**
   * @example "order updates for the shop"
   * @maxLength 500
   */
  description?: string;
}

/**
 * Extension: webhooks. Paygate POSTs every event of the caller (the same events, with the same ids, as
 * `GET /events`) to each registered endpoint as `{id, type, created_at, data}`; for `order.status_changed`,
 * `data` is `{order_id, status, detail, at, failure_code, failure_reason, rail_reference, amount, currency,
 * method, reference}`.
 *
 * - `Paygate-Event-Id`: the event's unique id (also `id` in the body); a retry carries the same id, so use it
 *   to ignore repeats: delivery is at least once.
 * - `Paygate-Signature: t=<unix seconds>,v1=<hex>`: HMAC-SHA256 with the endpoint's secret over
 *   `<t>.<raw body>`. Recompute it, compare in constant time, and refuse a `t` older than 5 minutes.
 * - Any 2xx answer acknowledges the event; anything else (or no answer within 5 s) is retried with exponential
 *   backoff, up to 8 attempts by default; each attempt is kept in the endpoint's delivery log.
 */
@Route('webhooks')
@Tags('Webhooks')
@Security('jwt')
export class WebhooksController extends Controller {
  /**
   * Register an endpoint for the caller's orders; the answer carries the signing `secret`, shown only here.
   * @summary Register a webhook endpoint
   */
  @Post('endpoints')
  @SuccessResponse(201, 'Registered')
  @Response<Problem>(400, 'Bad or refused URL')
  @Response<Problem>(
    409,
    'secret_not_replayed: a repeat with the same Idempotency-Key of a registration that answered; its secret was shown once and is not replayed',
  )
  @Response<Problem>(422, 'limit_exceeded: the caller already has the most enabled endpoints allowed (10 by default)')
  @OperationId('registerWebhookEndpoint')
  public async register(
    @Body() body: RegisterWebhookBody,
    @Request() req: ExpressRequest & { user: Caller },
  ): Promise<CreatedWebhookEndpoint> {
    const created = await registerWebhookEndpoint(req.user, body);
    this.setStatus(201);
    return created;
  }

  /**
   * The caller's endpoints, newest first.
   * @param limit 1 to 100, default 20
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   * @param cursor `next_cursor` of the previous page
   * @summary List webhook endpoints
   * @maxLength cursor 200
   */
  @Get('endpoints')
  @Response<Problem>(400, 'Bad limit or cursor')
  @OperationId('listWebhookEndpoints')
  public async list(
    @Request() req: ExpressRequest & { user: Caller },
    @Query() limit?: number,
    @Query() cursor?: string,
  ): Promise<Page<WebhookEndpointView>> {
    return listWebhookEndpoints(req.user, { limit, cursor });
  }

  /**
   * Stop sending events to an endpoint (its delivery log stays readable).
   * @summary Disable a webhook endpoint
   */
  @Delete('endpoints/{endpoint_id}')
  @SuccessResponse(204, 'Disabled')
  @Response<Problem>(400, 'Malformed endpoint id')
  @Response<Problem>(404, 'Not found')
  @OperationId('disableWebhookEndpoint')
  public async disable(@Path('endpoint_id') endpointId: Uuid, @Request() req: ExpressRequest & { user: Caller }): Promise<void> {
    await disableWebhookEndpoint(req.user, endpointId);
    this.setStatus(204);
  }

  /**
   * The delivery log of an endpoint, newest first: status, attempts and each attempt's answer.
   * @param limit 1 to 100, default 20
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   * @param cursor `next_cursor` of the previous page
   * @summary List webhook deliveries
   * @maxLength cursor 200
   */
  @Get('endpoints/{endpoint_id}/deliveries')
  @Response<Problem>(400, 'Malformed endpoint id, bad limit or cursor')
  @Response<Problem>(404, 'Not found')
  @OperationId('listWebhookDeliveries')
  public async deliveries(
    @Path('endpoint_id') endpointId: Uuid,
    @Request() req: ExpressRequest & { user: Caller },
    @Query() limit?: number,
    @Query() cursor?: string,
  ): Promise<Page<WebhookDeliveryView>> {
    return webhookDeliveries(req.user, endpointId, { limit, cursor });
  }

  /**
   * Send one delivery again now, with the same event id and body, whatever its status (delivered and failed
   * ones too); the answer is the delivery, due at once. The attempt shows in the delivery log. Each delivery
   * is sent again on request at most `WEBHOOK_MAX_MANUAL_RETRIES` times (5 by default); after that, 409.
   * @summary Retry a webhook delivery
   */
  @Post('endpoints/{endpoint_id}/deliveries/{delivery_id}/retry')
  @SuccessResponse(202, 'Due again')
  @Response<Problem>(400, 'Malformed endpoint or delivery id')
  @Response<Problem>(404, 'Not found')
  @Response<Problem>(
    409,
    'An attempt of the delivery is under way, the endpoint is disabled, or the delivery was already retried the most times allowed (WEBHOOK_MAX_MANUAL_RETRIES)',
  )
  @OperationId('retryWebhookDelivery')
  public async retry(
    @Path('endpoint_id') endpointId: Uuid,
    @Path('delivery_id') deliveryId: Uuid,
    @Request() req: ExpressRequest & { user: Caller },
  ): Promise<WebhookDeliveryView> {
    const delivery = await retryWebhookDelivery(req.user, endpointId, deliveryId);
    this.setStatus(202);
    return delivery;
  }
}
