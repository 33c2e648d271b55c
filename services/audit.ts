import { AppError, validationError } from '../platform/errors';
import { isUuid } from '../platform/ids';
import { componentLogger } from '../platform/logger';
import {
  actorOf,
  AUDIT_ACTIONS,
  AUDIT_SUBJECT_TYPES,
  type AuditAction,
  type AuditActor,
  type AuditSubjectType,
  type CredentialKind,
  type StaffAction,
} from '../domain/audit';
import type { Caller } from '../domain/caller';
import { appendAuditEntry, listAuditEntries, type AuditRecord } from '../repositories/audit';
import type { Tx } from '../repositories/transaction';
import { parseInstant } from './instants';
import { filterOneOf, keysetPage, keysetQuery, type Page } from './paging';

/**
 * The audit trail of staff actions (README, "Audit trail"; docs/compliance.md#audit-trail): each action writes
 * its entry in its own transaction, so an action without its entry cannot commit; admins read the trail.
 */

const log = componentLogger('audit');

/**
 * Record a staff action in `tx`, the transaction the action itself writes in (without one, the entry is its
 * own statement). `by` is the caller the action came from, or an operator's actor for a command on the host.
 * `before` and `after` carry the subject's relevant fields, never a secret or a password hash.
 */
export async function recordStaffAction(tx: Tx | undefined, entry: StaffAction & { by: Caller | AuditActor }): Promise<void> {
  const { by, ...action } = entry;
  const actor = 'credentialKind' in by ? by : actorOf(by);
  const recorded = await appendAuditEntry(actor, action, tx);
  log.debug(
    { auditEntryId: recorded.id, action: action.action, subjectId: action.subjectId, actorId: actor.userId },
    'staff action recorded',
  );
}

export interface AuditEntryView {
  entry_id: string;
  occurred_at: string;
  actor: {
    /** The account that acted; null for an operator's command on the host. */
    user_id: string | null;
    /** The account's roles when it acted. */
    roles: string[];
    /** How it proved who it was: `login`, `api_key` or `operator`. */
    credential_kind: CredentialKind;
    /** The API key's id, or the operator's command; null for a login. */
    credential_id: string | null;
  };
  /** What was done, e.g. `kyc.decided`. */
  action: AuditAction;
  subject: {
    type: AuditSubjectType;
    id: string;
  };
  // The subject's relevant fields before and after the action (null: it did not exist, or nothing is
  // kept). Line comments: a described free-form map is published inline, and the OWASP rules ask a bound
  // of it that a $ref does not need.
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  /** The request's `X-Request-Id` (null for an operator's command), to find its log lines. */
  request_id: string | null;
}

export const auditEntryView = (r: AuditRecord): AuditEntryView => ({
  entry_id: r.id,
  occurred_at: r.occurredAt.toISOString(),
  actor: { user_id: r.actor.userId, roles: r.actor.roles, credential_kind: r.actor.credentialKind, credential_id: r.actor.credentialId },
  action: r.action,
  subject: { type: r.subjectType, id: r.subjectId },
  before: r.before,
  after: r.after,
  request_id: r.actor.requestId,
});

export interface AuditQuery {
  actor?: string;
  action?: string;
  subject_type?: string;
  subject_id?: string;
  from?: string;
  to?: string;
  limit?: number;
  cursor?: string;
}

/**
 * The trail, newest first, keyset-paged; filters: the acting account, the action, the subject (type and/or
 * id), and `from` (inclusive) .. `to` (exclusive). Read by an admin with their login: never with an API key.
 */
export async function listAudit(caller: Caller, q: AuditQuery): Promise<Page<AuditEntryView>> {
  if (caller.key) throw new AppError('forbidden', 'the audit trail is read by an admin with their login, never with an API key');
  if (!caller.roles.includes('admin')) throw new AppError('forbidden', 'the audit trail is for admins');
  if (q.actor !== undefined && !isUuid(q.actor)) throw validationError('actor', 'must be a user id (a UUID)');
  const action = filterOneOf('action', q.action, AUDIT_ACTIONS);
  const subjectType = filterOneOf('subject_type', q.subject_type, AUDIT_SUBJECT_TYPES);
  if (q.subject_id !== undefined && (q.subject_id.length < 1 || q.subject_id.length > 200)) {
    throw validationError('subject_id', 'must be 1 to 200 characters');
  }
  const from = q.from === undefined ? undefined : parseInstant(q.from, 'from');
  const to = q.to === undefined ? undefined : parseInstant(q.to, 'to');
  if (from && to && from.getTime() >= to.getTime()) throw validationError('from', 'must be before `to`');
  const { limit, before } = keysetQuery(q);
  const rows = await listAuditEntries({ actorId: q.actor, action, subjectType, subjectId: q.subject_id, from, to }, before, limit + 1);
  return keysetPage(rows, limit, auditEntryView);
}
