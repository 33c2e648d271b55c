import type { Caller } from './caller';

/**
 * The audit trail of staff actions (docs/compliance.md#audit-trail): what an entry says, and how a caller
 * becomes its actor. Pure: the repository keeps the entries, the services write them.
 */

/** Every action the trail records; `monitoring_rule.changed` is kept for the monitoring rules' API. */
export const AUDIT_ACTIONS = [
  'kyc.decided',
  'review.decided',
  'appeal.first_approved',
  'appeal.approved',
  'appeal.rejected',
  'approval.requested',
  'approval.decided',
  'deposit.assigned',
  'break.resolved',
  'blocklist.changed',
  'role.changed',
  'api_key.created',
  'api_key.revoked',
  'monitoring_rule.changed',
  'goaml_report.created',
  'case.assigned',
  'case.noted',
  'case.closure_requested',
  'case.closed',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** What an action acts on. */
export const AUDIT_SUBJECT_TYPES = [
  'user',
  'screening_review',
  'appeal',
  'approval_request',
  'deposit',
  'reconciliation_break',
  'blocklist_entry',
  'api_key',
  'monitoring_rule',
  'goaml_report',
  'monitoring_case',
] as const;
export type AuditSubjectType = (typeof AUDIT_SUBJECT_TYPES)[number];

/** How the actor proved who they were: a login (JWT), an API key, or an operator's command on the host. */
export const CREDENTIAL_KINDS = ['login', 'api_key', 'operator'] as const;
export type CredentialKind = (typeof CREDENTIAL_KINDS)[number];

export interface AuditActor {
  /** The account; null only for an operator's command (which has no account behind it). */
  userId: string | null;
  roles: string[];
  credentialKind: CredentialKind;
  /** The API key's id, or the operator's command; null for a login. */
  credentialId: string | null;
  /** The request's `X-Request-Id`, to find its log lines. */
  requestId: string | null;
}

/** One staff action: what it was, what it acted on, and the subject's relevant fields before and after (never secrets). */
export interface StaffAction {
  action: AuditAction;
  subjectType: AuditSubjectType;
  subjectId: string;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

/** The actor of an action taken through the API. */
export const actorOf = (caller: Caller): AuditActor => ({
  userId: caller.id,
  roles: [...caller.roles],
  credentialKind: caller.key ? 'api_key' : 'login',
  credentialId: caller.key?.id ?? null,
  requestId: caller.requestId ?? null,
});

/** The actor of an operator's command run on the host (e.g. `admin:create`). */
export const operatorActor = (command: string): AuditActor => ({
  userId: null,
  roles: [],
  credentialKind: 'operator',
  credentialId: command,
  requestId: null,
});
