import type { Request as ExpressRequest } from 'express';
import { Body, Controller, Header, Post, Request, Response, Route, SuccessResponse, Tags, OperationId } from 'tsoa';
import type { Problem } from '../problem';
import { handleSandboxCallback } from '../../services/callback-service';

interface SandboxCallbackBody {
  /** @maxLength 100 */
  reference: string;
  /** @maxLength 100 */
  merchant_reference: string;
  status: 'succeeded' | 'failed';
  /** @maxLength 64 */
  failure_code: string | null;
  /** @maxLength 64 */
  provider_code: string | null;
}

@Route('callbacks')
@Tags('Callbacks')
export class CallbacksController extends Controller {
  /**
   * Provider-to-Paygate: outcome notifications from the sandbox rails. No bearer token; each one must carry
   * an HMAC-SHA256 of the raw body with the sandbox callback secret in `X-Sandbox-Signature` (401 otherwise).
   * Only an order submitted on the sandbox rail can be named: any other is unknown here (404). When no
   * payment method uses the sandbox rail, this endpoint is not served (404).
   * @summary Receive a sandbox rail callback
   * @maxLength signature 200
   */
  @Post('sandbox')
  @SuccessResponse(204, 'Accepted')
  @Response<Problem>(400, 'A body that is not a sandbox callback')
  @Response<Problem>(401, 'Bad signature')
  @Response<Problem>(404, 'Unknown reference, or an order not on the sandbox rail')
  @OperationId('sandboxRailCallback')
  public async sandbox(
    @Body() _body: SandboxCallbackBody,
    @Header('X-Sandbox-Signature') signature: string | undefined,
    @Request() req: ExpressRequest & { rawBody?: Buffer },
  ): Promise<void> {
    await handleSandboxCallback(req.rawBody?.toString('utf8') ?? '', signature);
    this.setStatus(204);
  }
}
