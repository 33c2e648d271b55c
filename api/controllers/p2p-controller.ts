import type { Request as ExpressRequest } from 'express';
import {
  Body,
  Controller,
  Get,
  Patch,
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
import type { AdAssetName, AdFiatName, AdPaymentMethodName, AdSideName, Uuid } from '../schema-types';
import type { Page } from '../../services/paging';
import { changeAd, createAd, getAd, listAds, p2pHistory, type AdView, type P2pHistoryItem } from '../../services/p2p-service';

/**
 * How the fiat leg is paid: `mpesa`, `airtel_money` or `bank_transfer` (checked against the list by the ad's rules).
 * @maxLength 20
 */
type PaymentMethodCode = string;

interface CreateAdBody {
  /**
   * `sell`: you sell the asset for KES (trades against it are payments with `method: "p2p"`); `buy`: you buy it.
   * @example "sell"
   * @maxLength 10
   */
  side: string;
  /**
   * `USDT`, `BTC`, `ETH` or `USDC`.
   * @example "USDT"
   * @maxLength 10
   */
  asset: string;
  /**
   * Only `KES` (the default).
   * @maxLength 10
   */
  fiat?: string;
  /**
   * `fixed` (give `price`) or `floating` (give `price_margin_pct` over the configured reference price).
   * @example "fixed"
   * @maxLength 10
   */
  price_type: string;
  /**
   * KES per whole unit of the asset.
   * @example "129.50"
   * @maxLength 64
   */
  price?: string;
  /**
   * Percent over the reference price, e.g. `"1.5"` or `"-0.75"`.
   * @maxLength 20
   */
  price_margin_pct?: string;
  /**
   * In the asset, with its scale.
   * @example "500.000000"
   * @maxLength 64
   */
  total_amount: string;
  /**
   * Smallest trade, KES.
   * @example "500.00"
   * @maxLength 64
   */
  min_order: string;
  /**
   * Largest trade, KES; at most total_amount × price.
   * @example "50000.00"
   * @maxLength 64
   */
  max_order: string;
  /**
   * @example ["mpesa"]
   * @maxItems 10
   */
  payment_methods: PaymentMethodCode[];
  /** @maxLength 1000 */
  terms?: string;
}

interface ChangeAdBody {
  /**
   * New fixed price, KES per whole unit (fixed-price sell ads).
   * @example "130.00"
   * @maxLength 64
   */
  price?: string;
  /**
   * New margin over the reference price (floating sell ads).
   * @maxLength 20
   */
  price_margin_pct?: string;
  /**
   * @example "500.00"
   * @maxLength 64
   */
  min_order?: string;
  /**
   * @example "20000.00"
   * @maxLength 64
   */
  max_order?: string;
  /** @maxLength 1000 */
  terms?: string | null;
  /**
   * `active`, `paused` or `closed` (final: what is left in escrow returns to your wallet).
   * @example "paused"
   * @maxLength 20
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
   * @summary Post a P2P ad
   */
  @Post('ads')
  @Security('jwt')
  @SuccessResponse(201, 'Created')
  @Response<Problem>(400, 'Validation failed')
  @Response<Problem>(401, 'Unauthenticated')
  @Response<Problem>(422, 'kyc_required or blocked_by_compliance')
  @OperationId('createP2pAd')
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
   * @summary Pause, resume, close or edit a P2P ad
   */
  @Patch('ads/{ad_id}')
  @Security('jwt')
  @Response<Problem>(400, 'Validation failed')
  @Response<Problem>(401, 'Unauthenticated')
  @Response<Problem>(403, 'Not the owner')
  @Response<Problem>(404, 'Not found')
  @Response<Problem>(409, 'The ad is closed')
  @OperationId('updateP2pAd')
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
   * @summary List open P2P ads
   * @maxLength amount 64
   * @maxLength cursor 200
   */
  @Get('ads')
  @Response<Problem>(400, 'Bad filter')
  @OperationId('listP2pAds')
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

  /**
   * One ad (public).
   * @summary Get a P2P ad
   */
  @Get('ads/{ad_id}')
  @Response<Problem>(400, 'Malformed id')
  @Response<Problem>(404, 'Not found')
  @OperationId('getP2pAd')
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
   * @summary List P2P trades and ad events
   * @maxLength cursor 200
   */
  @Get('history')
  @Security('jwt')
  @Response<Problem>(400, 'Bad filter')
  @Response<Problem>(401, 'Unauthenticated')
  @OperationId('listP2pHistory')
  public async history(
    @Request() req: ExpressRequest & { user: Caller },
    @Query() limit?: number,
    @Query() cursor?: string,
    @Query() user_id?: Uuid,
  ): Promise<Page<P2pHistoryItem>> {
    return p2pHistory(req.user, { limit, cursor, user_id });
  }
}
