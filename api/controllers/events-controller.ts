import type { Request as ExpressRequest } from 'express';
import { Controller, Get, OperationId, Query, Request, Response, Route, Security, Tags, Example } from 'tsoa';
import type { Caller } from '../auth/authentication';
import type { EventBody } from '../../domain/webhooks/events';
import type { Problem } from '../problem';
import type { Page } from '../../services/paging';
import { listCallerEvents } from '../../services/event-service';

/**
 * Events (docs/events.md#events): every state change of the caller's orders, deposits, wallet credits, appeals, KYC, P2P
 * trades and ads, kept 30 days (EVENTS_RETENTION_DAYS). Webhooks deliver the same events with the same
 * `id`s, so a receiver that was down catches up here and skips the ids it has seen.
 *
 * Types: `order.status_changed`, `deposit.status_changed`, `wallet.credited`, `appeal.opened`,
 * `appeal.approved`, `appeal.rejected`, `appeal.expired`, `kyc.status_changed`, `p2p.trade.created`,
 * `p2p.trade.locked`, `p2p.trade.released`, `p2p.trade.returned`, `p2p.trade.refused`, `p2p.ad.created`,
 * `.paused`, `.resumed`, `.edited`, `.filled`, `.closed`, and `payout_batch.created`, `.approved`, `.completed`,
 * `.cancelled`.
 */
@Route('events')
@Tags('Events')
@Security('jwt')
export class EventsController extends Controller {
  /**
   * The caller's events, newest first.
   * @param type An event type, or a family such as `order.*` or `p2p.*`
   * @param created_gte Only events created at or after this instant (RFC 3339)
   * @param created_lt Only events created before this instant (RFC 3339)
   * @param limit 1 to 100, default 20
   * @param cursor `next_cursor` of the previous page
   * @maxLength type 64
   * @pattern type ^[a-z0-9_.*]{1,64}$
   * @maxLength created_gte 40
   * @maxLength created_lt 40
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   * @maxLength cursor 200
   * @summary List events
   * @example created_gte "2026-11-25T10:00:00Z"
   */
  @Get()
  @Response<Problem>(400, 'Bad type, date-time, limit or cursor')
  @Example<Page<EventBody>>({
    data: [
      {
        id: '01a205e8-0a1b-7c2d-8e3f-405162738495',
        type: 'order.status_changed',
        created_at: '2026-11-25T10:00:01.200Z',
        data: {
          order_id: '01a205e7-cb20-7233-b0b2-3ad4a6f91819',
          status: 'completed',
          detail: 'settled by the rail',
          at: '2026-11-25T10:00:01.200Z',
          failure_code: null,
          failure_reason: null,
          rail_reference: 'SBX-2Q9X7K',
          amount: '1500.00',
          currency: 'KES',
          method: 'mobile_money',
          reference: 'INV-42',
        },
      },
      {
        id: '01a205e6-7e8f-7a0b-9c1d-2e3f40516273',
        type: 'wallet.credited',
        created_at: '2026-11-25T09:59:02.000Z',
        data: {
          currency: 'KES',
          amount_minor: '200000',
          amount: '2000.00',
          balance_after_minor: '200000',
          balance_after: '2000.00',
          kind: 'deposit',
          deposit_id: '01a205e6-5b1c-7d2e-9f30-4a5b6c7d8e9f',
          at: '2026-11-25T09:59:02.000Z',
        },
      },
    ],
    next_cursor: 'djE6MDFhMjA1ZTYtN2U4Zi03YTBiLTljMWQtMmUzZjQwNTE2Mjcz',
  })
  @OperationId('listEvents')
  public async list(
    @Request() req: ExpressRequest & { user: Caller },
    @Query() type?: string,
    @Query() created_gte?: string,
    @Query() created_lt?: string,
    @Query() limit?: number,
    @Query() cursor?: string,
  ): Promise<Page<EventBody>> {
    return listCallerEvents(req.user, { type, created_gte, created_lt, limit, cursor });
  }
}
