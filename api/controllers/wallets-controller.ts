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
import type { Caller } from '../auth/authentication';
import type { Problem } from '../problem';
import type { CryptoAssetCode, CurrencyCode, NetworkCode, Uuid } from '../schema-types';
import type { Page } from '../../services/paging';
import {
  assignDeposit,
  getDeposit,
  depositAddress,
  getWallets,
  startStkDeposit,
  unmatchedDeposits,
  walletStatement,
  type DepositAccepted,
  type DepositAddress,
  type StatementLine,
  type UnmatchedDepositView,
  type Wallets,
} from '../../services/wallet-service';
import type { DepositView } from '../../services/money-in';
import type { ApprovalRequestView } from '../../services/approvals';
import { recheckUnprovenDeposit, unprovenDeposits, type UnprovenDepositView } from '../../services/deposit-claims';

interface DepositBody {
  /**
   * Whole shillings, as a decimal string.
   * @example "2000.00"
   * @maxLength 64
   */
  amount: string;
  /**
   * KES.
   * @example "KES"
   * @maxLength 10
   */
  currency: string;
  /**
   * `mobile_money`: an M-Pesa STK Push to `phone`.
   * @example "mobile_money"
   * @maxLength 20
   */
  method: string;
  /**
   * The payer's M-Pesa number (E.164). Sandbox: `+254700001032` is cancelled by the user (also 1, 1037,
   * 2001), `+254700000999` never calls back (settled by the STK query).
   * @maxLength 20
   * @example "+254712345678"
   */
  phone: string;
}

interface AssignDepositBody {
  /** The user whose wallet the deposit is credited to. */
  user_id: Uuid;
}

/**
 * Wallets (docs/wallets.md#wallets): a balance per currency in the double-entry ledger (`wallet:<user_id>:<currency>`),
 * money in by deposits, and a statement whose running balance is the one the ledger stored.
 */
@Route('wallets')
@Tags('Wallets')
@Security('jwt')
export class WalletsController extends Controller {
  /**
   * The caller's balances, one per currency: `available` (spendable), `held` (payouts in flight) and
   * `pending_in` (deposits not yet confirmed), with the `deposit_reference` to quote when paying in.
   * Compliance and admin read anyone's with `user_id`; for anyone else another user is 404.
   * @summary List wallet balances
   */
  @Get()
  @Response<Problem>(400, 'Malformed user id')
  @Response<Problem>(404, 'No such user (or not yours to read)')
  @Example<Wallets>({
    user_id: '01a205e0-11aa-7bbb-8ccc-0123456789ab',
    deposit_reference: 'PG7K2M9Q',
    data: [{ currency: 'KES', available: '500.00', held: '0.00', pending_in: '0.00', updated_at: '2026-11-25T10:00:01.200Z' }],
  })
  @OperationId('listWallets')
  public async wallets(@Request() req: ExpressRequest & { user: Caller }, @Query() user_id?: Uuid): Promise<Wallets> {
    return getWallets(req.user, user_id);
  }

  /**
   * Money that arrived with a reference nobody has (compliance and admin), newest first. It waits in
   * `suspense:unmatched` until assigned.
   * @param limit 1 to 100, default 20
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   * @param cursor `next_cursor` of the previous page
   * @summary List unmatched bank credits
   * @maxLength cursor 200
   */
  @Get('unmatched-deposits')
  @Security('jwt', ['compliance', 'admin'])
  @Response<Problem>(400, 'Bad limit or cursor')
  @Response<Problem>(403, 'Not compliance or admin')
  @OperationId('listUnmatchedBankCredits')
  public async unmatched(@Query() limit?: number, @Query() cursor?: string): Promise<Page<UnmatchedDepositView>> {
    return unmatchedDeposits({ limit, cursor });
  }

  /**
   * Credit an unmatched deposit to a user's wallet, once (compliance and admin), within the wallet's KYC tier
   * cap: past it the answer is 422 (`kyc_required` or `limit_exceeded`) and the money stays unmatched. Staff
   * never assign money to themselves (403). Above `FOUR_EYES_ABOVE_KES` nothing moves yet: the answer is 202
   * with a four-eyes request, and a second, different staff member approves it at
   * `POST /compliance/approvals/{request_id}/approve`. A second assignment is 409.
   * @summary Assign an unmatched bank credit
   */
  @Post('unmatched-deposits/{deposit_id}/assign')
  @Security('jwt', ['compliance', 'admin'])
  @SuccessResponse(200, 'Assigned: the wallet is credited')
  @Response<ApprovalRequestView>(202, 'Above FOUR_EYES_ABOVE_KES: a four-eyes request waits for a second staff member')
  @Response<Problem>(400, 'Malformed id, or no such user')
  @Response<Problem>(403, 'Not compliance or admin, or assigning to oneself')
  @Response<Problem>(404, 'No such deposit')
  @Response<Problem>(409, 'Not unmatched (already assigned), or a four-eyes request already waits for it')
  @Response<Problem>(422, "kyc_required or limit_exceeded: the wallet would pass its tier's cap")
  @OperationId('assignBankCredit')
  public async assign(
    @Path('deposit_id') depositId: Uuid,
    @Body() body: AssignDepositBody,
    @Request() req: ExpressRequest & { user: Caller },
  ): Promise<DepositView | ApprovalRequestView> {
    const outcome = await assignDeposit(req.user, depositId, body.user_id);
    if ('assigned' in outcome) return outcome.assigned;
    this.setStatus(202);
    this.setHeader('Location', `/api/v1/compliance/approvals/${outcome.pending.request_id}`);
    return outcome.pending;
  }

  /**
   * Money a rail announced that is not credited, for staff (compliance and admin), newest first
   * (docs/wallets.md#money-in-is-proven): paybill confirmations refused at the door (`rejected`: not from
   * Daraja's addresses, or without a standing URL token), waiting for Daraja's Transaction Status answer
   * (`checking`), or that the rail did not confirm (`unconfirmed`: unknown receipt, different amount or
   * account), and STK payments for a request Paygate has no pending record of. None of it reaches a wallet
   * unless the rail confirms it.
   * @param status `rejected`, `checking` or `unconfirmed`; all three by default
   * @param limit 1 to 100, default 20
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   * @param cursor `next_cursor` of the previous page
   * @summary List unproven deposits
   * @maxLength cursor 200
   */
  @Get('unproven-deposits')
  @Security('jwt', ['compliance', 'admin'])
  @Response<Problem>(400, 'Bad status, limit or cursor')
  @Response<Problem>(401, 'Not signed in')
  @Response<Problem>(403, 'Not compliance or admin')
  @Example<Page<UnprovenDepositView>>({
    data: [
      {
        claim_id: '01a205e9-3c4d-7e5f-8a6b-7c8d9e0f1a2b',
        status: 'unconfirmed',
        reason: 'Daraja could not confirm the receipt: The transaction receipt number does not exist.',
        channel: 'mpesa_c2b',
        provider_reference: 'TKL31AA5TX',
        currency: 'KES',
        amount: '9999.00',
        account_reference: 'PG7K2M9QXR4T',
        payer_phone: '+254712345678',
        payer_name: 'John',
        source_address: '196.201.214.200',
        received_at: '2026-11-26T08:00:00.000Z',
        updated_at: '2026-11-26T08:00:01.500Z',
      },
    ],
    next_cursor: null,
  })
  @OperationId('listUnprovenDeposits')
  public async unproven(
    @Query() status?: 'rejected' | 'checking' | 'unconfirmed',
    @Query() limit?: number,
    @Query() cursor?: string,
  ): Promise<Page<UnprovenDepositView>> {
    return unprovenDeposits({ status, limit, cursor });
  }

  /**
   * Ask Daraja again (Transaction Status) about an unproven paybill payment (compliance and admin): it goes
   * back to `checking`, and only the rail's confirmation of its amount and account credits it. Staff cannot
   * credit it on their own word. A claim that is not a readable paybill confirmation, or is already
   * credited, is 409.
   * @summary Ask the rail again about an unproven deposit
   */
  @Post('unproven-deposits/{claim_id}/recheck')
  @Security('jwt', ['compliance', 'admin'])
  @Response<Problem>(400, 'Malformed id')
  @Response<Problem>(401, 'Not signed in')
  @Response<Problem>(403, 'Not compliance or admin')
  @Response<Problem>(404, 'No such unproven deposit')
  @Response<Problem>(409, 'Not a paybill confirmation that can be asked about again')
  @Response<Problem>(503, 'Mobile money is not on Daraja')
  @Example<UnprovenDepositView>({
    claim_id: '01a205e9-3c4d-7e5f-8a6b-7c8d9e0f1a2b',
    status: 'checking',
    reason: null,
    channel: 'mpesa_c2b',
    provider_reference: 'TKL31AA5TX',
    currency: 'KES',
    amount: '2000.00',
    account_reference: 'PG7K2M9QXR4T',
    payer_phone: '+254712345678',
    payer_name: 'John',
    source_address: '196.201.214.200',
    received_at: '2026-11-26T08:00:00.000Z',
    updated_at: '2026-11-26T09:10:00.000Z',
  })
  @OperationId('recheckUnprovenDeposit')
  public async recheck(@Path('claim_id') claimId: Uuid): Promise<UnprovenDepositView> {
    return recheckUnprovenDeposit(claimId);
  }

  /**
   * Deposit by M-Pesa STK Push: the payer's phone is asked to pay, by workflow `deposit-<deposit_id>`; poll
   * the deposit for the outcome. The wallet is credited once the rail confirms it.
   * @param idempotencyKey 1 to 255 visible ASCII characters, e.g. a UUID; a repeat replays the first answer
   * @pattern idempotencyKey ^[!-~]{1,255}$
   * @summary Start an M-Pesa STK Push deposit
   * @maxLength _idempotencyKey 200
   */
  @Post('deposits')
  @SuccessResponse(202, 'Accepted')
  @Response<Problem>(400, 'Validation failed or Idempotency-Key missing')
  @Response<Problem>(409, 'Same Idempotency-Key still in progress')
  @Response<Problem>(422, 'blocked_by_compliance or idempotency_key_reused')
  @Response<Problem>(503, 'Deposits cannot be started right now')
  @Example<DepositAccepted>({
    deposit_id: '01a205e6-5b1c-7d2e-9f30-4a5b6c7d8e9f',
    status: 'pending',
    links: { self: '/api/v1/wallets/deposits/01a205e6-5b1c-7d2e-9f30-4a5b6c7d8e9f' },
  })
  @OperationId('startStkDeposit')
  public async startDeposit(
    @Body() body: DepositBody,
    @Header('Idempotency-Key') _idempotencyKey: string,
    @Request() req: ExpressRequest & { user: Caller },
  ): Promise<DepositAccepted> {
    const accepted = await startStkDeposit(req.user, body);
    this.setStatus(202);
    this.setHeader('Location', accepted.links.self);
    return accepted;
  }

  /**
   * One deposit and its status. Others' deposits are 404.
   * @summary Get a deposit
   */
  @Get('deposits/{deposit_id}')
  @Response<Problem>(400, 'Malformed deposit id')
  @Response<Problem>(404, 'Not found')
  @Example<DepositView>({
    deposit_id: '01a205e6-5b1c-7d2e-9f30-4a5b6c7d8e9f',
    status: 'completed',
    channel: 'mpesa_stk',
    currency: 'KES',
    amount: '2000.00',
    provider_reference: 'SBX-STK-8H2J4L',
    failure_code: null,
    failure_reason: null,
    created_at: '2026-11-25T09:59:00.000Z',
    updated_at: '2026-11-25T09:59:02.000Z',
  })
  @OperationId('getDeposit')
  public async deposit(@Path('deposit_id') depositId: Uuid, @Request() req: ExpressRequest & { user: Caller }): Promise<DepositView> {
    return getDeposit(req.user, depositId);
  }

  /**
   * Where to send a crypto asset to fund the wallet: the exchange account's deposit address, on `network`
   * when given, with the caller's deposit reference as the memo (tag). Each confirmed deposit is credited
   * once per txid by the `match-crypto-deposits` job; on the sandbox rail the address is a placeholder.
   * @param currency USDT, USDC, BTC or ETH
   * @param network The network's code (ccxt's), e.g. TRC20 or ERC20; the configured one by default
   * @summary Get a crypto deposit address
   */
  @Get('{currency}/deposit-address')
  @Response<Problem>(400, 'Not a crypto asset, or a malformed network')
  @Response<Problem>(503, 'The exchange did not answer')
  @OperationId('getCryptoDepositAddress')
  public async depositAddress(
    @Path() currency: CryptoAssetCode,
    @Request() req: ExpressRequest & { user: Caller },
    @Query() network?: NetworkCode,
  ): Promise<DepositAddress> {
    return depositAddress(req.user, currency, network);
  }

  /**
   * The statement of one wallet, newest first: each line's signed `amount` and the exact `balance_after`
   * the ledger stored with it. Compliance and admin read anyone's with `user_id`.
   * @param limit 1 to 100, default 20
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   * @param cursor `next_cursor` of the previous page
   * @summary List wallet transactions
   * @maxLength cursor 200
   */
  @Get('{currency}/transactions')
  @Response<Problem>(400, 'Bad currency or cursor')
  @Response<Problem>(404, 'No such user (or not yours to read)')
  @Example<Page<StatementLine>>({
    data: [
      {
        entry_id: '1042',
        at: '2026-11-25T10:00:00.300Z',
        kind: 'hold',
        amount: '-1500.00',
        balance_after: '500.00',
        order_id: '01a205e7-cb20-7233-b0b2-3ad4a6f91819',
        deposit_id: null,
        ad_id: null,
        description: 'payment 01a205e7-cb20-7233-b0b2-3ad4a6f91819',
      },
      {
        entry_id: '1017',
        at: '2026-11-25T09:59:02.000Z',
        kind: 'deposit',
        amount: '2000.00',
        balance_after: '2000.00',
        order_id: null,
        deposit_id: '01a205e6-5b1c-7d2e-9f30-4a5b6c7d8e9f',
        ad_id: null,
        description: 'deposit by mpesa_stk',
      },
    ],
    next_cursor: null,
  })
  @OperationId('listWalletTransactions')
  public async transactions(
    @Path() currency: CurrencyCode,
    @Request() req: ExpressRequest & { user: Caller },
    @Query() user_id?: Uuid,
    @Query() limit?: number,
    @Query() cursor?: string,
  ): Promise<Page<StatementLine>> {
    return walletStatement(req.user, currency, { user_id, limit, cursor });
  }
}
