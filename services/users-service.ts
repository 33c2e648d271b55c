import { AppError, validationError, type FieldError } from '../platform/errors';
import { isUuid } from '../platform/ids';
import { KYC_ID_TYPES, type KycIdType } from '../domain/users';
import { KYC_STATUSES, type KycStatus } from '../domain/users';
import { normaliseDocumentNumber } from '../domain/compliance/normalise';
import { inTransaction, isDuplicate, type Tx } from '../repositories/transaction';
import {
  decideKycSubmission,
  findUserWithKyc,
  kycAuditTrail,
  listUsersWithKyc,
  lockKycStatus,
  recordKycChange,
  screeningIdentity,
  submitKyc,
  type KycSubmission,
  type UserFilter,
  type UserRow,
} from '../repositories/users';
import { isStaff, type Caller } from '../domain/caller';
import { recordStaffAction } from './audit';
import { toUserView, type UserView } from './auth-service';
import { refuseOnScreeningHit } from './screening';
import { refuseOwnInterest } from './own-interest';
import { decodeCursor, filterOneOf, keysetPage, pageLimit, type Page } from './paging';

export interface KycChangeView {
  from: KycStatus;
  to: KycStatus;
  /** Who made the change; null when it was made outside the KYC service. */
  by: string | null;
  at: string;
  reason: string | null;
}

export interface KycView {
  status: KycStatus;
  id_type: KycIdType | null;
  id_number: string | null;
  /** YYYY-MM-DD. */
  date_of_birth: string | null;
  kra_pin: string | null;
  address: string | null;
  /** The current submission's id; a decision sends it back as `submission_id` (it changes on every resubmission). */
  submission_id: string | null;
  submitted_at: string | null;
  decided_at: string | null;
  /** Why a submission was rejected (or verified), as compliance wrote it. */
  reason: string | null;
  /** Compliance staff only: who decided. */
  decided_by?: string | null;
  /** Compliance staff only, in single-user reads: every status change, oldest first. */
  history?: KycChangeView[];
}

export interface UserDetailView extends UserView {
  kyc: KycView;
}

const SUBMISSION_FIELDS = ['id_type', 'id_number', 'date_of_birth', 'kra_pin', 'address'] as const;

/**
 * A user's KYC submission (`id_type`, `id_number`, `date_of_birth`, `kra_pin?`, `address?`) or compliance's
 * decision (`status`, `reason?`, `submission_id`). `submission_id` is required with `status`: the
 * `kyc.submission_id` the reviewer looked at. A decision on a submission that has since been replaced is 409,
 * so it never applies to data nobody reviewed.
 */
export type KycUpdateInput = Partial<Record<(typeof SUBMISSION_FIELDS)[number] | 'status' | 'reason' | 'submission_id', string>>;

const isoOrNull = (value: Date | null): string | null => (value ? new Date(value).toISOString() : null);

function toDetailView(row: UserRow, staff: boolean, history?: KycChangeView[]): UserDetailView {
  const user = toUserView({
    id: row.id,
    email: row.email,
    fullName: row.full_name,
    phone: row.phone,
    roles: row.roles,
    kycStatus: row.kyc_status,
    createdAt: new Date(row.created_at),
  });
  return {
    ...user,
    kyc: {
      status: row.kyc_status,
      id_type: row.id_type,
      id_number: row.id_number,
      date_of_birth: row.date_of_birth,
      kra_pin: row.kra_pin,
      address: row.address,
      submission_id: row.submission_id,
      submitted_at: isoOrNull(row.submitted_at),
      decided_at: isoOrNull(row.decided_at),
      reason: row.reason,
      ...(staff ? { decided_by: row.decided_by } : {}),
      ...(history ? { history } : {}),
    },
  };
}

async function kycHistory(userId: string): Promise<KycChangeView[]> {
  const rows = await kycAuditTrail(userId);
  return rows.map((r) => ({ from: r.from_status, to: r.to_status, by: r.actor_id, at: new Date(r.at).toISOString(), reason: r.reason }));
}

/** A user as the caller may see them: themselves, or anyone for compliance staff; others are 404. */
export async function getUser(caller: Caller, userId: string): Promise<UserDetailView> {
  if (!isUuid(userId)) throw validationError('user_id', 'must be a UUID');
  const staff = isStaff(caller);
  if (!staff && userId !== caller.id) throw new AppError('not_found', `user ${userId} not found`);
  const row = await findUserWithKyc(userId);
  if (!row) throw new AppError('not_found', `user ${userId} not found`);
  return toDetailView(row, staff, staff ? await kycHistory(userId) : undefined);
}

export interface UsersQuery {
  limit?: number;
  cursor?: string;
  kyc_status?: string;
  q?: string;
}

/** Every user (compliance staff), newest first, keyset-paged; `kyc_status` and `q` (e-mail or name) filter. */
export async function listUsers(query: UsersQuery): Promise<Page<UserDetailView>> {
  const limit = pageLimit(query.limit);
  const filter: UserFilter = { kycStatus: filterOneOf('kyc_status', query.kyc_status, KYC_STATUSES) };
  if (query.q !== undefined) {
    const q = query.q.trim();
    if (q.length === 0 || q.length > 100) throw validationError('q', 'must be 1 to 100 characters');
    filter.text = q;
  }
  if (query.cursor !== undefined) filter.before = decodeCursor(query.cursor);
  const rows = await listUsersWithKyc(filter, limit + 1);
  return keysetPage(rows, limit, (r) => toDetailView(r, true));
}

// ---------------------------------------------------------------------------------------------
// KYC (docs/kyc.md#states)

const ID_NUMBER_RULES: Record<KycIdType, { pattern: RegExp; message: string }> = {
  national_id: { pattern: /^\d{6,10}$/, message: 'a Kenyan national ID number is 6 to 10 digits' },
  passport: { pattern: /^[A-Z0-9]{6,12}$/, message: 'a passport number is 6 to 12 letters and digits' },
  alien_id: { pattern: /^[A-Z0-9]{6,12}$/, message: 'an alien ID number is 6 to 12 letters and digits' },
};
const MIN_AGE_YEARS = 18;
const MAX_AGE_YEARS = 120;

function failWith(errors: FieldError[]): never {
  throw new AppError('validation_failed', errors.map((e) => `${e.field}: ${e.message}`).join('; '), { errors });
}

function ageOn(today: Date, birth: Date): number {
  let age = today.getUTCFullYear() - birth.getUTCFullYear();
  const beforeBirthday =
    today.getUTCMonth() < birth.getUTCMonth() || (today.getUTCMonth() === birth.getUTCMonth() && today.getUTCDate() < birth.getUTCDate());
  if (beforeBirthday) age -= 1;
  return age;
}

function validateSubmission(body: KycUpdateInput): KycSubmission {
  const errors: FieldError[] = [];
  const idType = body.id_type;
  if (idType === undefined || !(KYC_ID_TYPES as readonly string[]).includes(idType)) {
    errors.push({ field: 'id_type', message: `must be one of ${KYC_ID_TYPES.join(', ')}` });
  }
  let idNumber: string | null = null;
  if (typeof body.id_number !== 'string' || body.id_number.trim() === '') {
    errors.push({ field: 'id_number', message: 'is required' });
  } else if (idType && (KYC_ID_TYPES as readonly string[]).includes(idType)) {
    idNumber = normaliseDocumentNumber(body.id_number);
    const rule = ID_NUMBER_RULES[idType as KycIdType];
    if (!idNumber || !rule.pattern.test(idNumber)) errors.push({ field: 'id_number', message: rule.message });
  }
  const dob = body.date_of_birth;
  const birth = typeof dob === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(dob) ? new Date(`${dob}T00:00:00Z`) : null;
  if (!birth || Number.isNaN(birth.getTime()) || birth.toISOString().slice(0, 10) !== dob) {
    errors.push({ field: 'date_of_birth', message: 'must be a date, YYYY-MM-DD' });
  } else {
    const age = ageOn(new Date(), birth);
    if (age < MIN_AGE_YEARS) errors.push({ field: 'date_of_birth', message: `the account holder must be at least ${MIN_AGE_YEARS}` });
    else if (age > MAX_AGE_YEARS) errors.push({ field: 'date_of_birth', message: 'is not a plausible date of birth' });
  }
  let kraPin: string | null = null;
  if (body.kra_pin !== undefined && body.kra_pin !== null && body.kra_pin !== '') {
    kraPin = body.kra_pin.trim().toUpperCase();
    if (!/^[AP]\d{9}[A-Z]$/.test(kraPin)) errors.push({ field: 'kra_pin', message: 'must be a KRA PIN, e.g. A123456789B' });
  }
  let address: string | null = null;
  if (body.address !== undefined && body.address !== null && body.address !== '') {
    address = body.address.trim();
    if (address.length < 3 || address.length > 200) errors.push({ field: 'address', message: 'must be 3 to 200 characters' });
  }
  if (errors.length > 0) failWith(errors);
  return { idType: idType as KycIdType, idNumber: idNumber!, dateOfBirth: dob!, kraPin, address };
}

/** Who may move a KYC status from where to where (anything else is 409). */
const USER_MAY: Partial<Record<KycStatus, KycStatus[]>> = { unverified: ['pending'], rejected: ['pending'], pending: ['pending'] };
const STAFF_MAY: Partial<Record<KycStatus, KycStatus[]>> = { pending: ['verified', 'rejected'], verified: ['rejected'] };

async function writeKycChange(
  userId: string,
  actorId: string,
  check: (current: KycStatus) => void,
  to: KycStatus,
  reason: string | null,
  record: (tx: Tx) => Promise<void>,
): Promise<void> {
  await inTransaction(async (tx) => {
    const from = await lockKycStatus(userId, tx);
    if (!from) throw new AppError('not_found', `user ${userId} not found`);
    check(from);
    await record(tx);
    await recordKycChange({ userId, actorId, from, to, reason }, tx);
  });
}

const conflict = (from: KycStatus, to: KycStatus, why: string): AppError =>
  new AppError('conflict', `KYC cannot go from ${from} to ${to}: ${why}`);

/**
 * PUT /users/{id}/kyc. The user submits their own data (→ `pending`, screened first); compliance staff
 * decide on someone else's (→ `verified` | `rejected`). A user sending `status` for themself is 403.
 */
export async function updateKyc(caller: Caller, userId: string, body: KycUpdateInput): Promise<UserDetailView> {
  if (!isUuid(userId)) throw validationError('user_id', 'must be a UUID');
  const staff = isStaff(caller);
  const self = userId === caller.id;
  if (!staff && !self) throw new AppError('not_found', `user ${userId} not found`);
  const target = await screeningIdentity(userId);
  if (!target) throw new AppError('not_found', `user ${userId} not found`);

  if (body.status !== undefined) {
    if (self) throw new AppError('forbidden', 'KYC decisions are made by compliance staff, never on one’s own account');
    const sent = SUBMISSION_FIELDS.filter((f) => body[f] !== undefined);
    if (sent.length > 0) failWith(sent.map((field) => ({ field, message: 'send either a submission or a decision, not both' })));
    const to = body.status;
    if (to !== 'verified' && to !== 'rejected') failWith([{ field: 'status', message: 'must be verified or rejected' }]);
    const reason = body.reason === undefined || body.reason === null ? null : body.reason.trim();
    if (reason !== null && (reason.length === 0 || reason.length > 500))
      failWith([{ field: 'reason', message: 'must be 1 to 500 characters' }]);
    const reviewed = body.submission_id;
    if (typeof reviewed !== 'string' || !isUuid(reviewed))
      failWith([{ field: 'submission_id', message: 'is required with status: the kyc.submission_id that was reviewed (a UUID)' }]);
    let decidedFrom: KycStatus | undefined;
    // Nor on someone who shares the officer's name, phone, e-mail or ID number (docs/compliance.md#own-interest).
    await refuseOwnInterest(caller, 'a KYC submission', [{ role: 'customer under review', userId }]);
    await writeKycChange(
      userId,
      caller.id,
      (from) => {
        if (!STAFF_MAY[from]?.includes(to)) {
          throw conflict(from, to, from === 'unverified' ? 'nothing has been submitted' : 'only a pending submission can be decided');
        }
        decidedFrom = from;
      },
      to,
      reason,
      async (tx) => {
        // The database decides: the decision lands only on the submission that was reviewed.
        const decided = await decideKycSubmission({ userId, submissionId: reviewed, actorId: caller.id, reason }, tx);
        if (!decided) {
          throw new AppError('conflict', `KYC submission ${reviewed} is not the current one: it was replaced; review the new submission`);
        }
        await recordStaffAction(tx, {
          by: caller,
          action: 'kyc.decided',
          subjectType: 'user',
          subjectId: userId,
          before: { kyc_status: decidedFrom ?? null, submission_id: reviewed },
          after: { kyc_status: to, submission_id: reviewed, reason },
        });
      },
    );
    return getUser(caller, userId);
  }

  if (!self) failWith([{ field: 'status', message: 'is required to decide on another user’s KYC (verified or rejected)' }]);
  const submission = validateSubmission(body);
  await refuseOnScreeningHit('kyc', userId, [
    { field: 'kyc.id_number', type: 'national_id', value: submission.idNumber },
    { field: 'user.full_name', type: 'name', value: target.fullName },
    { field: 'user.email', type: 'email', value: target.email },
    { field: 'user.phone', type: 'phone', value: target.phone },
  ]);
  try {
    await writeKycChange(
      userId,
      caller.id,
      (from) => {
        if (!USER_MAY[from]?.includes('pending')) throw conflict(from, 'pending', 'the identity is already verified');
      },
      'pending',
      null,
      (tx) => submitKyc(userId, submission, tx),
    );
  } catch (err) {
    if (isDuplicate(err)) {
      throw new AppError('conflict', 'this identity document is already registered to another account');
    }
    throw err;
  }
  return getUser(caller, userId);
}
