import type { Request as ExpressRequest } from 'express';
import { Controller, Example, Get, OperationId, Query, Request, Response, Route, Security, Tags } from 'tsoa';
import type { Caller } from '../auth/authentication';
import type { Problem } from '../problem';
import type { Page } from '../../services/paging';
import { listAudit, type AuditEntryView } from '../../services/audit';
import type { AuditAction, AuditSubjectType } from '../../domain/audit';

/**
 * The audit trail of staff actions (docs/compliance.md#audit-trail): KYC and screening decisions, appeals,
 * four-eyes requests and their decisions, assignments of unmatched money, blocklist and role changes, API
 * keys. Append-only, kept 7 years; admins read it, with their login.
 */
@Route('compliance/audit')
@Tags('Compliance')
@Security('jwt', ['admin'])
export class AuditController extends Controller {
  /**
   * Audit entries, newest first: who (account, roles, credential), when, what (action and subject), the
   * subject before and after, and the request id. Admin only, and never with an API key.
   * @param actor Only actions by this account (a user id)
   * @param action Only this action, e.g. `kyc.decided`
   * @param subject_type Only actions on this kind of subject, e.g. `user`
   * @param subject_id Only actions on this subject
   * @param from Only entries at or after this instant (RFC 3339)
   * @param to Only entries before this instant (RFC 3339)
   * @param limit 1 to 100, default 20
   * @param cursor `next_cursor` of the previous page
   * @maxLength actor 36
   * @maxLength subject_id 200
   * @maxLength from 40
   * @maxLength to 40
   * @isInt limit
   * @minimum limit 1
   * @maximum limit 100
   * @maxLength cursor 200
   * @example from "2026-11-26T00:00:00Z"
   * @summary List audit entries
   */
  @Get()
  @Response<Problem>(400, 'Bad actor, action, subject, date-time, limit or cursor')
  @Response<Problem>(403, 'Not an admin, or an API key')
  @Example<Page<AuditEntryView>>({
    data: [
      {
        entry_id: '01a205f2-6d7e-7f80-9a1b-2c3d4e5f6a7b',
        occurred_at: '2026-11-26T09:05:00.000Z',
        actor: {
          user_id: '01a205da-1b2c-7d3e-8f40-515253545556',
          roles: ['user', 'compliance'],
          credential_kind: 'login',
          credential_id: null,
        },
        action: 'kyc.decided',
        subject: { type: 'user', id: '01a205e0-11aa-7bbb-8ccc-0123456789ab' },
        before: { kyc_status: 'pending', submission_id: '01a205e1-2b3c-7d4e-8f50-616263646566' },
        after: { kyc_status: 'verified', submission_id: '01a205e1-2b3c-7d4e-8f50-616263646566', reason: null },
        request_id: '01a205f2-6d70-7000-8000-000000000001',
      },
    ],
    next_cursor: null,
  })
  @OperationId('listAuditEntries')
  public async list(
    @Request() req: ExpressRequest & { user: Caller },
    @Query() actor?: string,
    @Query() action?: AuditAction,
    @Query() subject_type?: AuditSubjectType,
    @Query() subject_id?: string,
    @Query() from?: string,
    @Query() to?: string,
    @Query() limit?: number,
    @Query() cursor?: string,
  ): Promise<Page<AuditEntryView>> {
    return listAudit(req.user, { actor, action, subject_type, subject_id, from, to, limit, cursor });
  }
}
