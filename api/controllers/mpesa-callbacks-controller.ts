import type { Request as ExpressRequest } from 'express';
import { Body, Controller, Path, Post, Query, Request, Response, Route, Tags, OperationId } from 'tsoa';
import type { Problem } from '../problem';
import type { Uuid } from '../schema-types';
import {
  handleB2cResult,
  handleC2bConfirmation,
  handleC2bStatusResult,
  handleC2bValidation,
  handleStkCallback,
  type C2bAck,
  type DarajaAck,
} from '../../services/mpesa-callback-service';
import { receiveMpesaBalance } from '../../services/mpesa-balance-service';

interface StkCallbackItem {
  Name: string;
  Value?: string | number;
}

interface StkCallbackBody {
  Body: {
    stkCallback: {
      MerchantRequestID: string;
      CheckoutRequestID: string;
      ResultCode: number | string;
      ResultDesc?: string;
      CallbackMetadata?: { Item: StkCallbackItem[] };
    };
  };
}

interface B2cResultParameter {
  Key: string;
  Value?: string | number;
}

interface B2cResultBody {
  Result: {
    ResultType?: number | string;
    ResultCode: number | string;
    ResultDesc?: string;
    OriginatorConversationID?: string;
    ConversationID?: string;
    TransactionID?: string;
    ResultParameters?: { ResultParameter?: B2cResultParameter[] | B2cResultParameter };
  };
}

/** A paybill (C2B) payment as Daraja posts it to the validation and confirmation URLs. */
interface C2bBody {
  TransactionType?: string;
  /** M-Pesa's receipt, unique per payment. */
  TransID?: string;
  TransTime?: string;
  /** Shillings, e.g. "200.00". */
  TransAmount?: string | number;
  BusinessShortCode?: string | number;
  /** The account number the customer typed: their Paygate deposit reference. */
  BillRefNumber?: string;
  InvoiceNumber?: string;
  OrgAccountBalance?: string | number;
  ThirdPartyTransID?: string;
  MSISDN?: string | number;
  FirstName?: string;
  MiddleName?: string;
  LastName?: string;
}

@Route('callbacks/mpesa')
@Tags('Callbacks')
export class MpesaCallbacksController extends Controller {
  /**
   * Daraja's STK Push result for one order (the CallBackURL Paygate sends with each request). Always answered
   * 200 in Daraja's shape; `ResultCode` 0 when the callback was tied to a pending request, 1 when ignored.
   * Provider-to-Paygate, no bearer token: only a callback carrying the per-request `token` Paygate put in
   * that CallBackURL, for a request still pending, has any effect.
   * @summary Receive an M-Pesa STK Push callback
   * @maxLength token 200
   */
  @Post('stk/{order_id}')
  @Response<Problem>(400, 'A body that is not a Daraja callback')
  @OperationId('receiveMpesaStkCallback')
  public async stk(@Path('order_id') orderId: Uuid, @Body() body: StkCallbackBody, @Query() token?: string): Promise<DarajaAck> {
    return handleStkCallback(orderId, token, body);
  }

  /**
   * Daraja's B2C result for one payout (its ResultURL). Provider-to-Paygate, no bearer token: only a result
   * carrying the per-request `token`, for a payout still pending whose ConversationID and
   * OriginatorConversationID match the ones recorded, has any effect; anything else is acknowledged and ignored.
   * @summary Receive an M-Pesa B2C result
   * @maxLength token 200
   */
  @Post('b2c/{order_id}/result')
  @Response<Problem>(400, 'A body that is not a Daraja callback')
  @OperationId('receiveMpesaB2cResult')
  public async b2cResult(@Path('order_id') orderId: Uuid, @Body() body: B2cResultBody, @Query() token?: string): Promise<DarajaAck> {
    return handleB2cResult(orderId, 'result', token, body);
  }

  /**
   * The result of the Transaction Status query Paygate sends when a payout's result is late. Same rule as
   * the B2C result: the per-request `token` and a pending payout with matching ids, or it is ignored.
   * @summary Receive an M-Pesa transaction status result
   * @maxLength token 200
   */
  @Post('b2c/{order_id}/status')
  @Response<Problem>(400, 'A body that is not a Daraja callback')
  @OperationId('receiveMpesaB2cStatus')
  public async b2cStatus(@Path('order_id') orderId: Uuid, @Body() body: B2cResultBody, @Query() token?: string): Promise<DarajaAck> {
    return handleB2cResult(orderId, 'status', token, body);
  }

  /**
   * Daraja's QueueTimeOutURL: the request timed out in Daraja's queue. Acknowledged and recorded; it decides
   * nothing, the Transaction Status query does.
   * @summary Receive an M-Pesa queue timeout
   * @maxLength token 200
   */
  @Post('b2c/{order_id}/timeout')
  @Response<Problem>(400, 'A body that is not a Daraja callback')
  @OperationId('receiveMpesaB2cTimeout')
  public async b2cTimeout(@Path('order_id') orderId: Uuid, @Body() body: B2cResultBody, @Query() token?: string): Promise<DarajaAck> {
    return handleB2cResult(orderId, 'timeout', token, body);
  }

  /**
   * Daraja's C2B validation for the paybill (the ValidationURL registered at boot): accepted (`ResultCode`
   * 0) only when `BillRefNumber` is a user's deposit reference; otherwise refused with a `C2B000…` code
   * before the customer pays. Provider-to-Paygate, no bearer token: taken only from Daraja's addresses
   * (DARAJA_CALLBACK_ALLOWED_IPS, read through TRUST_PROXY) and with the `token` of a current registration
   * (or the previous one within its grace period); otherwise acknowledged and ignored.
   * @summary Validate an M-Pesa paybill payment
   * @maxLength token 200
   */
  @Post('c2b/validation')
  @Response<Problem>(400, 'A body that is not a Daraja callback')
  @OperationId('validateMpesaC2bPayment')
  public async c2bValidation(@Body() body: C2bBody, @Request() req: ExpressRequest, @Query() token?: string): Promise<C2bAck> {
    return handleC2bValidation(req.ip, token, body);
  }

  /**
   * Daraja's C2B confirmation (the ConfirmationURL registered at boot). Taken under the validation's rule
   * (Daraja's addresses, a standing `token`); it is then recorded and proven with Daraja's Transaction
   * Status query for its `TransID` before anything is credited: the wallet of the deposit reference is
   * credited once per `TransID` when the rail confirms the amount and account. A confirmation refused at the
   * door, or that the rail does not confirm, is kept for staff (`GET /wallets/unproven-deposits`) and never
   * credited. Always answered 200, `ResultCode` 0 once recorded for checking, 1 when refused.
   * @summary Confirm an M-Pesa paybill payment
   * @maxLength token 200
   */
  @Post('c2b/confirmation')
  @Response<Problem>(400, 'A body that is not a Daraja callback')
  @OperationId('confirmMpesaC2bPayment')
  public async c2bConfirmation(@Body() body: C2bBody, @Request() req: ExpressRequest, @Query() token?: string): Promise<C2bAck> {
    return handleC2bConfirmation(req.ip, token, body);
  }

  /**
   * The result of the Transaction Status query Paygate sends about a paybill receipt (and that query's
   * queue timeout). Taken only with the claim's `token`, from Daraja's addresses, and with the
   * ConversationID and OriginatorConversationID of the query Paygate sent; anything else is acknowledged and
   * ignored. A result confirming the amount and account credits the wallet once; any other leaves the
   * payment unproven, for staff.
   * @summary Receive an M-Pesa paybill status result
   * @maxLength token 200
   */
  @Post('c2b/status/{claim_id}')
  @Response<Problem>(400, 'A body that is not a Daraja callback')
  @OperationId('receiveMpesaC2bStatus')
  public async c2bStatus(
    @Path('claim_id') claimId: Uuid,
    @Body() body: B2cResultBody,
    @Request() req: ExpressRequest,
    @Query() token?: string,
  ): Promise<C2bAck> {
    return handleC2bStatusResult(claimId, req.ip, token, body);
  }

  /**
   * The result of the Account Balance query Paygate sends for reconciliation (and that query's queue
   * timeout). Taken only with the query's `token`, from Daraja's addresses, and with the ConversationID and
   * OriginatorConversationID of the query Paygate sent; anything else is acknowledged and ignored.
   * @summary Receive an M-Pesa account balance result
   * @maxLength token 200
   */
  @Post('balance/{query_id}')
  @Response<Problem>(400, 'A body that is not a Daraja callback')
  @OperationId('receiveMpesaBalance')
  public async balance(
    @Path('query_id') queryId: Uuid,
    @Body() body: B2cResultBody,
    @Request() req: ExpressRequest,
    @Query() token?: string,
  ): Promise<C2bAck> {
    return receiveMpesaBalance(queryId, req.ip, token, body);
  }
}
