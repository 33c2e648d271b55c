import { Algorithm, hash, verify } from '@node-rs/argon2';
import { config } from '../platform/config';
import { AppError, validationError } from '../platform/errors';
import { uuidv7 } from '../platform/ids';
import { componentLogger } from '../platform/logger';
import type { Role } from '../domain/users';
import { operatorActor } from '../domain/audit';
import { normaliseKenyanPhone } from '../domain/phone';
import { inTransaction, isDuplicate } from '../repositories/transaction';
import { createUser, findUser, findUserByEmail, setRoles, type UserRecord } from '../repositories/users';
import { issueAccessToken, type IssuedToken } from './tokens';
import { recordScreeningReview, refuseIfBlocked } from './screening';
import { recordStaffAction } from './audit';
import { claimLoginAttempt, clearFailedLogins, limitLoginByIp, limitRegisterByIp } from './rate-limits';

export interface RegisterInput {
  email: string;
  password: string;
  full_name: string;
  phone?: string;
}

export interface UserView {
  user_id: string;
  email: string;
  full_name: string;
  phone: string | null;
  /** The highest role held: admin, compliance or user. */
  role: Role;
  roles: Role[];
  kyc_status: 'unverified' | 'pending' | 'verified' | 'rejected';
  created_at: string;
}

// OWASP's argon2id recommendation (19 MiB, 2 iterations, 1 lane).
const ARGON2 = { algorithm: Algorithm.Argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 };
// Verified against when the e-mail is unknown, so a login takes as long whether or not the account exists.
let decoyHash: Promise<string> | undefined;

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}\.[^\s@]{2,}$/;
const MAX_EMAIL_LENGTH = 320;
const MAX_PASSWORD_LENGTH = 256;

export function toUserView(user: Pick<UserRecord, 'id' | 'email' | 'fullName' | 'phone' | 'roles' | 'kycStatus' | 'createdAt'>): UserView {
  const role: Role = user.roles.includes('admin') ? 'admin' : user.roles.includes('compliance') ? 'compliance' : 'user';
  return {
    user_id: user.id,
    email: user.email,
    full_name: user.fullName,
    phone: user.phone,
    role,
    roles: user.roles,
    kyc_status: user.kycStatus,
    created_at: user.createdAt.toISOString(),
  };
}

function normaliseEmail(raw: string): string {
  const email = raw.trim().toLowerCase();
  if (!EMAIL.test(email)) throw validationError('email', 'must be an e-mail address');
  return email;
}

function checkPassword(password: string): void {
  if (password.length < 10) throw validationError('password', 'must be at least 10 characters');
  if (password.length > MAX_PASSWORD_LENGTH) throw validationError('password', `must be at most ${MAX_PASSWORD_LENGTH} characters`);
}

export async function registerUser(input: RegisterInput, ip: string): Promise<UserView> {
  const email = normaliseEmail(input.email);
  checkPassword(input.password);
  const fullName = input.full_name.trim();
  if (fullName.length < 2 || fullName.length > 140) throw validationError('full_name', 'must be 2 to 140 characters');
  let phone: string | null = null;
  if (input.phone !== undefined && input.phone !== null && input.phone !== '') {
    phone = normaliseKenyanPhone(input.phone);
    if (!phone) throw validationError('phone', 'must be a Kenyan phone number in E.164 form, e.g. +254712345678');
  }
  await limitRegisterByIp(ip);
  // Blocklisted e-mails, phones and names cannot register (docs/access.md#accounts, docs/compliance.md#where-screening-runs). A name for review is recorded
  // with the account, in its transaction: staff see whose it is, and its user can never decide it.
  const review = await refuseIfBlocked('registration', null, [
    { field: 'email', type: 'email', value: email },
    { field: 'phone', type: 'phone', value: phone },
    { field: 'full_name', type: 'name', value: fullName },
  ]);
  const passwordHash = await hash(input.password, ARGON2);
  try {
    const user = await inTransaction(async (tx) => {
      const created = await createUser({ id: uuidv7(), email, passwordHash, fullName, phone }, tx);
      if (review) await recordScreeningReview('registration', review, created.id, tx);
      return created;
    });
    return toUserView(user);
  } catch (err) {
    if (isDuplicate(err)) throw new AppError('conflict', 'an account with this e-mail already exists');
    throw err;
  }
}

export async function login(emailRaw: string, password: string, ip: string): Promise<IssuedToken> {
  const email = emailRaw.trim().toLowerCase();
  // No account has a longer e-mail or password: refused before it costs a hash or a rate-limit key in Redis.
  if (email.length > MAX_EMAIL_LENGTH) throw validationError('email', `must be at most ${MAX_EMAIL_LENGTH} characters`);
  if (password.length > MAX_PASSWORD_LENGTH) throw validationError('password', `must be at most ${MAX_PASSWORD_LENGTH} characters`);
  await limitLoginByIp(ip);
  const claim = await claimLoginAttempt(email, ip);
  const user = await findUserByEmail(email);
  decoyHash ??= hash('decoy-password-for-timing', ARGON2);
  const ok = await verify(user?.passwordHash ?? (await decoyHash), password).catch(() => false);
  if (!user || !ok) throw new AppError('unauthenticated', 'wrong e-mail or password');
  await clearFailedLogins(email, ip, claim);
  return issueAccessToken(config().jwt, { sub: user.id, roles: user.roles });
}

export async function currentUser(userId: string): Promise<UserView> {
  const user = await findUser(userId);
  if (!user) throw new AppError('unauthenticated', 'the account no longer exists');
  return toUserView(user);
}

export type AdminOutcome = 'created' | 'present' | 'promoted';

/**
 * Make sure an admin account exists for `emailRaw` (boot with ADMIN_EMAIL/ADMIN_PASSWORD, or admin:create).
 * It creates the account (holding `admin` and `compliance`) when no account has that e-mail. An account
 * that already holds `admin` is left exactly as it is, password included. Anyone may register any e-mail,
 * so an existing account without `admin` is never promoted on the strength of the e-mail alone: only with
 * `promote`, once the operator has checked who owns it; otherwise a `conflict` is thrown. A promotion keeps
 * the account's own password and is logged (who, roles before and after).
 */
export async function ensureAdmin(
  emailRaw: string,
  password: string | undefined,
  options: { promote?: boolean; by?: string } = {},
): Promise<{ user: UserView; outcome: AdminOutcome }> {
  // The audit trail names the operator's command (docs/compliance.md#audit-trail): no account acts here.
  const operator = operatorActor(options.by ?? 'admin:create');
  const email = normaliseEmail(emailRaw);
  if (password !== undefined) checkPassword(password);
  const existing = await findUserByEmail(email);
  if (existing) {
    if (existing.roles.includes('admin')) return { user: toUserView(existing), outcome: 'present' };
    if (!options.promote) throw new AppError('conflict', `an account with the e-mail ${email} exists and is not an admin`);
    const before = existing.roles;
    const roles = Array.from(new Set<Role>([...before, 'compliance', 'admin']));
    await inTransaction(async (tx) => {
      await setRoles(existing.id, roles, tx);
      await recordStaffAction(tx, {
        by: operator,
        action: 'role.changed',
        subjectType: 'user',
        subjectId: existing.id,
        before: { roles: before },
        after: { roles },
      });
    });
    existing.roles = roles;
    componentLogger('auth').warn(
      { event: 'admin_promoted', user_id: existing.id, email, roles_before: before, roles_after: roles },
      'existing account promoted to admin',
    );
    return { user: toUserView(existing), outcome: 'promoted' };
  }
  if (password === undefined) throw validationError('password', 'is needed to create the admin account');
  try {
    const passwordHash = await hash(password, ARGON2);
    const user = await inTransaction(async (tx) => {
      const made = await createUser(
        { id: uuidv7(), email, passwordHash, fullName: 'Administrator', phone: null, roles: ['user', 'compliance', 'admin'] },
        tx,
      );
      await recordStaffAction(tx, {
        by: operator,
        action: 'role.changed',
        subjectType: 'user',
        subjectId: made.id,
        before: null,
        after: { roles: made.roles },
      });
      return made;
    });
    componentLogger('auth').info({ event: 'admin_created', user_id: user.id, email }, 'admin account created');
    return { user: toUserView(user), outcome: 'created' };
  } catch (err) {
    // Registered in the meantime: decide again on what is there now (never promoted without `promote`).
    if (isDuplicate(err)) return ensureAdmin(email, password, options);
    throw err;
  }
}
