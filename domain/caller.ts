import type { ApiKeyMode } from './api-keys';
import type { KycStatus, Role } from './users';

/** The authenticated caller, as every use case sees it: who, with which roles, through which credential. */
export interface Caller {
  id: string;
  roles: Role[];
  /** Set when the request came with an API key: the caller acts within its scopes and mode. */
  key?: { id: string; mode: ApiKeyMode; scopes: string[] };
  /**
   * The KYC status, read with the roles when this request was authenticated (the same row, the same read);
   * use cases that decide on it use it rather than reading the row again. Absent on callers not made from a request.
   */
  kycStatus?: KycStatus;
  /**
   * Set when authentication left the account's standing to the use case's own statement, which reads it with its
   * work (a payment's acceptance: docs/access.md#accounts). `roles` is then empty and `kycStatus` absent, and the
   * use case refuses an account that is gone before it writes anything.
   */
  standingInStatement?: true;
  /** The request's `X-Request-Id`, for the audit trail (docs/compliance.md#audit-trail). Absent on callers not made from a request. */
  requestId?: string;
}

export const isStaff = (caller: Caller): boolean => caller.roles.includes('compliance') || caller.roles.includes('admin');
