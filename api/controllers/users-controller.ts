import type { Request as ExpressRequest } from 'express';
import { Body, Controller, Get, Path, Put, Query, Request, Response, Route, Security, Tags, OperationId } from 'tsoa';
import type { Caller } from '../auth/authentication';
import type { Problem } from '../problem';
import type { KycStatusName, Uuid } from '../schema-types';
import type { Page } from '../../services/paging';
import { getUser, listUsers, updateKyc, type UserDetailView } from '../../services/users-service';

/**
 * Either the user's own submission, or compliance's decision on someone else's:
 * - submission (the user, for themself; → `pending`): `id_type`, `id_number`, `date_of_birth`, `kra_pin?`, `address?`
 * - decision (compliance or admin, on another user's pending submission): `status`, `submission_id`, `reason?`
 * @example { "id_type": "national_id", "id_number": "12345678", "date_of_birth": "1990-04-12", "kra_pin": "A123456789B", "address": "Moi Avenue 12, Nairobi" }
 */
interface KycUpdateBody {
  /**
   * `national_id`, `passport` or `alien_id`.
   * @maxLength 20
   */
  id_type?: string;
  /**
   * @example "12345678"
   * @maxLength 40
   */
  id_number?: string;
  /**
   * YYYY-MM-DD; the account holder must be at least 18.
   * @example "1990-04-12"
   * @maxLength 10
   */
  date_of_birth?: string;
  /**
   * Kenya Revenue Authority PIN.
   * @example "A123456789B"
   * @maxLength 20
   */
  kra_pin?: string;
  /**
   * @example "Moi Avenue 12, Nairobi"
   * @maxLength 500
   */
  address?: string;
  /**
   * Compliance only: `verified` or `rejected`. A user sending it for themself gets 403.
   * @maxLength 20
   */
  status?: string;
  /**
   * Compliance only: why, shown to the user (e.g. "the ID photo is unreadable").
   * @maxLength 1000
   */
  reason?: string;
  /**
   * Compliance only, required with `status`: the `kyc.submission_id` that was reviewed. When the user has
   * resubmitted since, the decision is 409 and nothing changes.
   * @example "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
   * @maxLength 36
   */
  submission_id?: string;
}

@Route('users')
@Tags('Users')
export class UsersController extends Controller {
  /**
   * Every user, newest first, with their KYC status and submission. Compliance and admin only.
   * @param limit 1 to 100, default 20
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   * @param cursor `next_cursor` of the previous page
   * @param kyc_status `unverified`, `pending`, `verified` or `rejected`, e.g. `pending` for the review queue
   * @param q part of the e-mail or full name
   * @minLength q 1
   * @maxLength q 200
   * @summary List users
   * @maxLength cursor 200
   */
  @Get()
  @Security('jwt', ['compliance', 'admin'])
  @Response<Problem>(400, 'Bad filter')
  @Response<Problem>(401, 'Unauthenticated')
  @Response<Problem>(403, 'Not compliance staff')
  @OperationId('listUsers')
  public async list(
    @Query() limit?: number,
    @Query() cursor?: string,
    @Query() kyc_status?: KycStatusName,
    @Query() q?: string,
  ): Promise<Page<UserDetailView>> {
    return listUsers({ limit, cursor, kyc_status, q });
  }

  /**
   * A user with their KYC data. Users read only themselves (others are 404); staff read anyone, with the KYC history.
   * @summary Get a user
   */
  @Get('{user_id}')
  @Security('jwt')
  @Response<Problem>(400, 'Malformed user id')
  @Response<Problem>(401, 'Unauthenticated')
  @Response<Problem>(404, 'Not found')
  @OperationId('getUser')
  public async read(@Path('user_id') userId: Uuid, @Request() req: ExpressRequest & { user: Caller }): Promise<UserDetailView> {
    return getUser(req.user, userId);
  }

  /**
   * KYC: the user submits their identity (`unverified` or `rejected` → `pending`; screened against the
   * blocklist first); compliance decides (`pending` → `verified` | `rejected`, or revokes `verified` →
   * `rejected`). Every change goes to the audit trail (who, when, from → to).
   * @summary Set a user's KYC status
   */
  @Put('{user_id}/kyc')
  @Security('jwt')
  @Response<Problem>(400, 'Validation failed')
  @Response<Problem>(401, 'Unauthenticated')
  @Response<Problem>(403, 'A user deciding their own KYC')
  @Response<Problem>(404, 'Not found')
  @Response<Problem>(
    409,
    'Not allowed from the current KYC status, the reviewed submission was replaced, or the document belongs to another account',
  )
  @Response<Problem>(422, 'blocked_by_compliance')
  @OperationId('setUserKyc')
  public async updateKyc(
    @Path('user_id') userId: Uuid,
    @Body() body: KycUpdateBody,
    @Request() req: ExpressRequest & { user: Caller },
  ): Promise<UserDetailView> {
    return updateKyc(req.user, userId, body);
  }
}
