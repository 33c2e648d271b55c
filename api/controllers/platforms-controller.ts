import { Controller, Get, Query, Response, Route, Tags, OperationId } from 'tsoa';
import type { Problem } from '../problem';
import { bankDirectory, listExchanges, type BankDirectory, type ExchangeList } from '../../services/platform-service';

/**
 * Where money can go: the catalogue Paygate discovers and keeps fresh in the background (crypto exchanges
 * from ccxt every 15 minutes, Kenyan banks from the curated registry daily). Public: no token needed.
 */
@Route('platforms')
@Tags('Platforms')
export class PlatformsController extends Controller {
  /**
   * Active crypto exchanges, by id, with their capabilities, fees and live status. Filters combine.
   * Unlike the other lists this one is ordered by id (alphabetically), not newest first.
   * @param q part of the id or name, case-insensitive, e.g. `bin`
   * @param country ISO 3166-1 alpha-2 code (or `EU`) the exchange is based in, e.g. `US`
   * @param capability a ccxt capability the exchange must support, e.g. `fetchTicker`, `withdraw`
   * @param certified `true`: only ccxt-certified exchanges; `false`: only the others
   * @param limit 1 to 100, default 20
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   * @param cursor `next_cursor` of the previous page
   * @summary List supported exchanges
   * @maxLength q 100
   * @maxLength country 64
   * @maxLength capability 64
   * @maxLength cursor 200
   */
  @Get('exchanges')
  @Response<Problem>(400, 'Bad filter, limit or cursor (the field is named in `errors`)')
  @OperationId('listExchanges')
  public async exchanges(
    @Query() q?: string,
    @Query() country?: string,
    @Query() capability?: string,
    @Query() certified?: boolean,
    @Query() limit?: number,
    @Query() cursor?: string,
  ): Promise<ExchangeList> {
    return listExchanges({ q, country, capability, certified, limit, cursor });
  }

  /**
   * The Kenyan banks Paygate can pay into: the primary bank (`PRIMARY_BANK_CODE`, default `68` Equity Bank),
   * reached through its own connector, with its live status; and every other CBK-licensed bank of the
   * registry, reached from the primary bank by PesaLink or RTGS.
   * @summary List supported banks
   */
  @Get('banks')
  @OperationId('listBanks')
  public async banks(): Promise<BankDirectory> {
    return bankDirectory();
  }
}
