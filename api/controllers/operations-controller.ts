import { Controller, Example, Get, OperationId, Query, Response, Route, Security, Tags } from 'tsoa';
import type { Problem } from '../problem';
import type { Page } from '../../services/paging';
import { listUnresolvedPayouts, type UnresolvedPayoutView } from '../../services/operations-service';

@Route('operations')
@Tags('Operations')
@Security('jwt', ['compliance', 'admin'])
export class OperationsController extends Controller {
  /**
   * Payments whose rail has given no definite answer for longer than `PAYMENT_UNRESOLVED_AFTER_MS` (24 h by
   * default), oldest first. Each is still `processing` with its hold kept, and Paygate still asks its rail;
   * nothing resolves it by itself. `submission: unknown` means the answer to the transfer was lost, so the
   * rail may or may not have paid: check with the rail, using `reference`, before anything else.
   * @param limit 1 to 100, default 20
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   * @param cursor `next_cursor` of the previous page
   * @maxLength cursor 200
   * @summary List unresolved payouts
   */
  @Get('unresolved-payouts')
  @Example<Page<UnresolvedPayoutView>>({
    data: [
      {
        order_id: '01933b6e-4f1a-7c3e-9a51-0d2f8b7c6a10',
        user_id: '01933b6e-1111-7c3e-9a51-0d2f8b7c6a10',
        method: 'bank_transfer',
        amount: '2500.00',
        currency: 'KES',
        rail: 'jenga',
        reference: '000000004217',
        rail_reference: null,
        submission: 'unknown',
        sent_at: '2026-11-25T09:14:03.201Z',
        overdue_at: '2026-11-25T09:29:03.512Z',
        created_at: '2026-11-25T09:14:02.870Z',
      },
    ],
    next_cursor: null,
  })
  @Response<Problem>(400, 'Bad limit or cursor')
  @Response<Problem>(401, 'Unauthenticated')
  @Response<Problem>(403, 'Not compliance staff or an admin')
  @OperationId('listUnresolvedPayouts')
  public async listUnresolved(@Query() limit?: number, @Query() cursor?: string): Promise<Page<UnresolvedPayoutView>> {
    return listUnresolvedPayouts({ limit, cursor });
  }
}
