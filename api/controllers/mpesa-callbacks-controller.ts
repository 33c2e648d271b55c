import { Body, Controller, Path, Post, Query, Route, Tags } from 'tsoa';
import { handleStkCallback, type DarajaAck } from '../services/mpesa-callback-service';

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

@Route('callbacks/mpesa')
@Tags('Callbacks')
export class MpesaCallbacksController extends Controller {
  /**
   * Daraja's STK Push result for one order (the CallBackURL Paygate sends with each request). Always answered
   * 200 in Daraja's shape; `ResultCode` 0 when the callback was tied to a pending request, 1 when ignored.
   * Provider-to-Paygate, no bearer token: only a callback carrying the per-request `token` Paygate put in
   * that CallBackURL, for a request still pending, has any effect.
   */
  @Post('stk/{order_id}')
  public async stk(@Path('order_id') orderId: string, @Body() body: StkCallbackBody, @Query() token?: string): Promise<DarajaAck> {
    return handleStkCallback(orderId, token, body);
  }
}
