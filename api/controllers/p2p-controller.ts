import type { Request as ExpressRequest } from 'express';
import { Body, Controller, Get, Patch, Path, Post, Query, Request, Response, Route, Security, SuccessResponse, Tags } from 'tsoa';
import type { Caller } from '../auth/authentication';
import type { Problem } from '../problem';
import type { AdAssetName, AdFiatName, AdPaymentMethodName, AdSideName, Uuid } from '../schema-types';
import type { Page } from '../services/paging';
import { changeAd, createAd, getAd, listAds, p2pHistory, type AdView, type P2pHistoryItem } from '../services/p2p-service';

interface CreateAdBody {
  /**
   * `sell`: you sell the asset for KES (trades against it are payments with `method: "p2p"`); `buy`: you buy it.
   * @example "sell"
   */
  side: string;
  /**
   * `USDT`, `BTC`, `ETH` or `USDC`.
   * @example "USDT"
   */
  asset: string;
  /** Only `KES` (the default). */
  fiat?: string;
  /**
   * `fixed` (give `price`) or `floating` (give `price_margin_pct` over the configured reference price).
   * @example "fixed"
   */
  price_type: string;
  /**
   * KES per whole unit of the asset.
   * @example "129.50"
   */
  price?: string;
  /**
   * Percent over the reference price, e.g. `"1.5"` or `"-0.75"`.
   */
  price_margin_pct?: string;
  /**
   * In the asset, with its scale.
   * @example "500.000000"
   */
  total_amount: string;
  /**
   * Smallest trade, KES.
   * @example "500.00"
   */
  min_order: string;
  /**
   * Largest trade, KES; at most total_amount × price.
   * @example "50000.00"
   */
  max_order: string;
  /** @example ["mpesa"] */
  payment_methods: string[];
  terms?: string;
}

interface ChangeAdBody {
  /**
   * New fixed price, KES per whole unit (fixed-price sell ads).
   * @example "130.00"
   */
  price?: string;
  /** New margin over the reference price (floating sell ads). */
  price_margin_pct?: string;
  /** @example "500.00" */
  min_order?: string;
  /** @example "20000.00" */
  max_order?: string;
  terms?: string | null;
  /**
   * `active`, `paused` or `closed` (final: what is left in escrow returns to your wallet).
   * @example "paused"
   */
  status?: string;
}

@Route('p2p')
@Tags('P2P')
export class P2pController extends Controller {
  /**
   * Post an ad. Needs verified KYC (422 `kyc_required`); the owner is screened against the blocklist (422
   * `blocked_by_compliance`); min_order ≤ max_order ≤ total_amount × price (400 naming the field). The ad is
   * funded from your wallet into its escrow — a sell ad's total_amount of the asset, a buy ad's
   * total_amount × price in KES — or refused with 422 `insufficient_funds`.
   * Honours `Idempotency-Key`.
   */
  @Post('ads')
  @Security('jwt')
  @SuccessResponse(201, 'Created')
  @Response<Problem>(400, 'Validation failed')
  @Response<Problem>(401, 'Unauthenticated')
  @Response<Problem>(422, 'kyc_required or blocked_by_compliance')
  public async createAd(@Body() body: CreateAdBody, @Request() req: ExpressRequest & { user: Caller }): Promise<AdView> {
    const ad = await createAd(req.user, body);
    this.setStatus(201);
    this.setHeader('Location', `/api/v1/p2p/ads/${ad.ad_id}`);
    return ad;
  }

  /**
   * Change your ad: price, limits, terms, status (`active` ↔ `paused`, or `closed`). Validated like a new
   * ad; closing returns what is left in the ad's escrow to your wallet. Only the owner may change an ad
   * (403); a closed ad is final (409), and a buy ad's price is fixed by its escrow (409).
   */
  @Patch('ads/{ad_id}')
  @Security('jwt')
  @Response<Problem>(400, 'Validation failed')
  @Response<Problem>(401, 'Unauthenticated')
  @Response<Problem>(403, 'Not the owner')
  @Response<Problem>(404, 'Not found')
  @Response<Problem>(409, 'The ad is closed')
  public async changeAd(
    @Path('ad_id') adId: Uuid,
    @Body() body: ChangeAdBody,
    @Request() req: ExpressRequest & { user: Caller },
  ): Promise<AdView> {
    return changeAd(req.user, adId, body);
  }

  /**
   * Active ads with something left (public), best price first: sell ads by ascending price, buy ads by
   * descending price (sell ads first when `side` is not given).
   * @param amount KES: only ads whose limits and remaining amount fit it
   * @param limit 1 to 100, default 20
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   * @param cursor `next_cursor` of the previous page
   */
  @Get('ads')
  @Response<Problem>(400, 'Bad filter')
  public async listAds(
    @Query() side?: AdSideName,
    @Query() asset?: AdAssetName,
    @Query() fiat?: AdFiatName,
    @Query() payment_method?: AdPaymentMethodName,
    @Query() amount?: string,
    @Query() limit?: number,
    @Query() cursor?: string,
  ): Promise<Page<AdView>> {
    return listAds({ side, asset, fiat, payment_method, amount, limit, cursor });
  }

  /** One ad (public). */
  @Get('ads/{ad_id}')
  @Response<Problem>(400, 'Malformed id')
  @Response<Problem>(404, 'Not found')
  public async getAd(@Path('ad_id') adId: Uuid): Promise<AdView> {
    return getAd(adId);
  }

  /**
   * The caller's P2P activity, newest first: trades as maker or taker, and the events of their ads
   * (created, paused, resumed, edited, filled, closed). Compliance and admin see everyone's, or one user's with `user_id`.
   * @param limit 1 to 100, default 20
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   * @param cursor `next_cursor` of the previous page
   */
  @Get('history')
  @Security('jwt')
  @Response<Problem>(400, 'Bad filter')
  @Response<Problem>(401, 'Unauthenticated')
  public async history(
    @Request() req: ExpressRequest & { user: Caller },
    @Query() limit?: number,
    @Query() cursor?: string,
    @Query() user_id?: Uuid,
  ): Promise<Page<P2pHistoryItem>> {
    return p2pHistory(req.user, { limit, cursor, user_id });
  }
}
