import type { Request as ExpressRequest } from 'express';
import { Body, Controller, Delete, Get, Path, Post, Query, Request, Response, Route, Security, SuccessResponse, Tags } from 'tsoa';
import type { Caller } from '../auth/authentication';
import type { Problem } from '../problem';
import type { Uuid } from '../schema-types';
import type { Page } from '../services/paging';
import {
  disableWebhookEndpoint,
  listWebhookEndpoints,
  registerWebhookEndpoint,
  webhookDeliveries,
  type CreatedWebhookEndpoint,
  type WebhookDeliveryView,
  type WebhookEndpointView,
} from '../services/webhook-service';

interface RegisterWebhookBody {
  /**
   * Where Paygate POSTs events. Private, loopback and link-local addresses are refused unless the
   * operator set WEBHOOKS_ALLOW_PRIVATE_TARGETS.
   * @example "https://merchant.example.com/paygate/events"
   */
  url: string;
  /** @example "order updates for the shop" */
  description?: string;
}

/**
 * Extension: webhooks. Paygate POSTs every status change of the caller's orders to each registered endpoint
 * as `{id, type: "order.status_changed", created_at, data: {order_id, status, detail, at, failure_code,
 * failure_reason, rail_reference, amount, currency, method, reference}}`.
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
  /** Register an endpoint for the caller's orders; the answer carries the signing `secret`, shown only here. */
  @Post('endpoints')
  @SuccessResponse(201, 'Registered')
  @Response<Problem>(400, 'Bad or refused URL')
  @Response<Problem>(422, 'limit_exceeded: the caller already has the most enabled endpoints allowed (10 by default)')
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
   */
  @Get('endpoints')
  @Response<Problem>(400, 'Bad limit or cursor')
  public async list(
    @Request() req: ExpressRequest & { user: Caller },
    @Query() limit?: number,
    @Query() cursor?: string,
  ): Promise<Page<WebhookEndpointView>> {
    return listWebhookEndpoints(req.user, { limit, cursor });
  }

  /** Stop sending events to an endpoint (its delivery log stays readable). */
  @Delete('endpoints/{endpoint_id}')
  @SuccessResponse(204, 'Disabled')
  @Response<Problem>(400, 'Malformed endpoint id')
  @Response<Problem>(404, 'Not found')
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
   */
  @Get('endpoints/{endpoint_id}/deliveries')
  @Response<Problem>(400, 'Malformed endpoint id, bad limit or cursor')
  @Response<Problem>(404, 'Not found')
  public async deliveries(
    @Path('endpoint_id') endpointId: Uuid,
    @Request() req: ExpressRequest & { user: Caller },
    @Query() limit?: number,
    @Query() cursor?: string,
  ): Promise<Page<WebhookDeliveryView>> {
    return webhookDeliveries(req.user, endpointId, { limit, cursor });
  }
}
