import { QueryTypes, type InferAttributes, type Transaction } from 'sequelize';
import { KycAuditEntry, User, models } from '../models';
import { Conditions, containing } from './filters';
import { orderWithEventsJson, type OrderWithEvents } from './orders';
import { queryPrepared, queryRows } from './transaction';
import type { KycIdType, KycStatus, Role } from '../domain/users';

// --- added for payments

/** The user's KYC status, the user row locked for the rest of `tx` (one payment at a time checks its limits). */
export async function lockKycStatus(userId: string, tx: Transaction): Promise<KycStatus | null> {
  const [row] = await models().query<{ kyc_status: KycStatus }>('SELECT kyc_status FROM users WHERE id = :userId FOR UPDATE', {
    replacements: { userId },
    type: QueryTypes.SELECT,
    transaction: tx,
  });
  return row?.kyc_status ?? null;
}

/** The user's KYC status, or null when there is no such user. */
export async function kycStatusOf(userId: string, tx?: Transaction): Promise<KycStatus | null> {
  const [row] = await models().query<{ kyc_status: KycStatus }>('SELECT kyc_status FROM users WHERE id = :userId', {
    replacements: { userId },
    type: QueryTypes.SELECT,
    transaction: tx,
  });
  return row?.kyc_status ?? null;
}

/** What a request may do, as stored now: the user's roles and KYC status. */
export interface Standing {
  roles: Role[];
  kycStatus: KycStatus;
}

/** The user's standing as stored now, or null when there is no such user (read on every authenticated request). */
export async function standingOf(userId: string): Promise<Standing | null> {
  // Read on every authenticated request: straight through pg (see queryRows).
  const [user] = await queryPrepared<{ roles: Role[]; kyc_status: KycStatus }>('SELECT roles, kyc_status FROM users WHERE id = $1', [
    userId,
  ]);
  return user ? { roles: user.roles, kycStatus: user.kyc_status } : null;
}

/**
 * The user's standing and one order with its events, in one statement: the order read's caller and its answer
 * in one round trip (docs/access.md#accounts). Null when there is no such user; `order` null when there is no
 * such order. Whose order it is, is for the caller to judge.
 */
export async function standingWithOrder(userId: string, orderId: string): Promise<(Standing & { order: OrderWithEvents | null }) | null> {
  const [row] = await queryPrepared<{ roles: Role[]; kyc_status: KycStatus; order: OrderWithEvents | null }>(
    `SELECT roles, kyc_status, ${orderWithEventsJson(2)} AS order FROM users WHERE id = $1`,
    [userId, orderId],
  );
  return row ? { roles: row.roles, kycStatus: row.kyc_status, order: row.order } : null;
}

// --- users and their KYC, as the users API reads and writes them

/** A user with their KYC record, as the users API shows them (snake_case, one query). */
export interface UserRow {
  id: string;
  email: string;
  full_name: string;
  phone: string | null;
  roles: Role[];
  kyc_status: KycStatus;
  created_at: Date;
  id_type: KycIdType | null;
  id_number: string | null;
  date_of_birth: string | null;
  kra_pin: string | null;
  address: string | null;
  submission_id: string | null;
  submitted_at: Date | null;
  decided_at: Date | null;
  decided_by: string | null;
  reason: string | null;
}

const USER_COLUMNS = `u.id, u.email, u.full_name, u.phone, u.roles, u.kyc_status, u.created_at,
  k.id_type, k.id_number, to_char(k.date_of_birth, 'YYYY-MM-DD') AS date_of_birth, k.kra_pin, k.address,
  k.submission_id, k.submitted_at, k.decided_at, k.decided_by, k.reason`;

/** The user and their KYC record, or undefined when there is no such user. */
export async function findUserWithKyc(userId: string): Promise<UserRow | undefined> {
  const [row] = await models().query<UserRow>(
    `SELECT ${USER_COLUMNS} FROM users u LEFT JOIN kyc_records k ON k.user_id = u.id WHERE u.id = :userId`,
    { replacements: { userId }, type: QueryTypes.SELECT },
  );
  return row;
}

export interface UserFilter {
  kycStatus?: KycStatus;
  /** A piece of the e-mail or the full name, matched case-insensitively and literally. */
  text?: string;
  /** Keyset: only users with an id below this one. */
  before?: string;
}

/** Users with their KYC records, newest first (ids are UUIDv7), at most `limit`. */
export async function listUsersWithKyc(filter: UserFilter, limit: number): Promise<UserRow[]> {
  const where = new Conditions({ limit });
  if (filter.kycStatus !== undefined) where.add('u.kyc_status = :kycStatus', { kycStatus: filter.kycStatus });
  if (filter.text !== undefined) {
    where.add(`(u.email ILIKE :pattern ESCAPE '\\' OR u.full_name ILIKE :pattern ESCAPE '\\')`, { pattern: containing(filter.text) });
  }
  if (filter.before !== undefined) where.add('u.id < :after', { after: filter.before });
  return models().query<UserRow>(
    `SELECT ${USER_COLUMNS} FROM users u LEFT JOIN kyc_records k ON k.user_id = u.id
      ${where.where}
      ORDER BY u.id DESC LIMIT :limit`,
    { replacements: where.replacements, type: QueryTypes.SELECT },
  );
}

export interface KycAuditRow {
  from_status: KycStatus;
  to_status: KycStatus;
  actor_id: string | null;
  at: Date;
  reason: string | null;
}

/** Every KYC status change of the user, oldest first. */
export async function kycAuditTrail(userId: string): Promise<KycAuditRow[]> {
  return models().query<KycAuditRow>(
    'SELECT from_status, to_status, actor_id, at, reason FROM kyc_audit WHERE user_id = :userId ORDER BY id',
    {
      replacements: { userId },
      type: QueryTypes.SELECT,
    },
  );
}

/** Who the user is, for screening: id, e-mail, phone, full name and KYC status. */
export async function screeningIdentity(
  userId: string,
): Promise<{ id: string; email: string; phone: string | null; fullName: string; kycStatus: KycStatus } | null> {
  return User.findByPk(userId, { attributes: ['id', 'email', 'phone', 'fullName', 'kycStatus'], raw: true });
}

/**
 * Move the user's KYC status and write its audit row (with actor and reason), in `tx`. The transaction says
 * it writes its own audit row, so the trigger that audits changes made outside the KYC service stands aside.
 */
export async function recordKycChange(
  change: { userId: string; actorId: string; from: KycStatus; to: KycStatus; reason: string | null },
  tx: Transaction,
): Promise<void> {
  await models().query(`SELECT set_config('paygate.kyc_audited', 'on', true)`, { transaction: tx });
  await User.update({ kycStatus: change.to, updatedAt: new Date() }, { where: { id: change.userId }, transaction: tx });
  await KycAuditEntry.create(
    { userId: change.userId, actorId: change.actorId, fromStatus: change.from, toStatus: change.to, reason: change.reason },
    { transaction: tx },
  );
}

/**
 * Record a decision on the submission that was reviewed, and only on it. Returns false when the user's
 * current submission is another one (it was replaced meanwhile).
 */
export async function decideKycSubmission(
  decision: { userId: string; submissionId: string; actorId: string; reason: string | null },
  tx: Transaction,
): Promise<boolean> {
  const [, decided] = await models().query(
    `UPDATE kyc_records SET decided_at = now(), decided_by = :actorId, reason = :reason, updated_at = now()
      WHERE user_id = :userId AND submission_id = :submissionId`,
    { replacements: decision, transaction: tx, type: QueryTypes.UPDATE },
  );
  return decided === 1;
}

export interface KycSubmission {
  idType: KycIdType;
  idNumber: string;
  dateOfBirth: string;
  kraPin: string | null;
  address: string | null;
}

/**
 * Record the user's submission: the first, or a new one replacing the last (a new submission id, the last
 * decision cleared). An identity document registered to another account is a unique violation (`isDuplicate`).
 */
export async function submitKyc(userId: string, submission: KycSubmission, tx: Transaction): Promise<void> {
  await models().query(
    `INSERT INTO kyc_records (user_id, id_type, id_number, date_of_birth, kra_pin, address, submitted_at)
     VALUES (:userId, :idType, :idNumber, :dateOfBirth, :kraPin, :address, now())
     ON CONFLICT (user_id) DO UPDATE
       SET submission_id = gen_random_uuid(), id_type = EXCLUDED.id_type, id_number = EXCLUDED.id_number, date_of_birth = EXCLUDED.date_of_birth,
           kra_pin = EXCLUDED.kra_pin, address = EXCLUDED.address, submitted_at = now(),
           decided_at = NULL, decided_by = NULL, reason = NULL, updated_at = now()`,
    { replacements: { userId, ...submission }, transaction: tx },
  );
}

// --- accounts: registration, sign-in and the admin bootstrap

/** A user account as the rest of the code sees it: a plain object. */
export type UserRecord = InferAttributes<User>;

export type NewUser = Pick<UserRecord, 'id' | 'email' | 'passwordHash' | 'fullName' | 'phone'> & Partial<Pick<UserRecord, 'roles'>>;

/** Create an account; an e-mail already registered is a unique violation (`isDuplicate`). */
export async function createUser(user: NewUser, tx?: Transaction): Promise<UserRecord> {
  return (await User.create(user, { transaction: tx })).get({ plain: true });
}

export async function findUserByEmail(email: string): Promise<UserRecord | null> {
  return User.findOne({ where: { email }, raw: true });
}

export async function findUser(userId: string): Promise<UserRecord | null> {
  return User.findByPk(userId, { raw: true });
}

/** Replace the account's roles. */
export async function setRoles(userId: string, roles: Role[], tx?: Transaction): Promise<void> {
  await User.update({ roles, updatedAt: new Date() }, { where: { id: userId }, transaction: tx });
}

/** Who posts an ad: KYC status and the identifiers screening needs (with the KYC record's ID number). */
export async function posterIdentity(
  userId: string,
): Promise<{ kyc_status: string; email: string; phone: string | null; full_name: string; id_number: string | null } | undefined> {
  const [user] = await models().query<{
    kyc_status: string;
    email: string;
    phone: string | null;
    full_name: string;
    id_number: string | null;
  }>(
    `SELECT u.kyc_status, u.email, u.phone, u.full_name, k.id_number
       FROM users u LEFT JOIN kyc_records k ON k.user_id = u.id WHERE u.id = :id`,
    { replacements: { id: userId }, type: QueryTypes.SELECT },
  );
  return user;
}

/** The user's phone number, or null (none, or no such user). */
export async function phoneOf(userId: string): Promise<string | null> {
  const user = await User.findByPk(userId, { attributes: ['phone'], raw: true });
  return user?.phone ?? null;
}

// --- wallets

/** The user who was given `reference` to pay in with (already normalised), or undefined. */
export async function userByDepositReference(reference: string): Promise<{ id: string } | undefined> {
  const user = await User.findOne({ where: { depositReference: reference }, attributes: ['id'], raw: true });
  return user ?? undefined;
}

/** The reference the user quotes when paying in, or null when there is no such user. */
export async function depositReferenceOf(userId: string): Promise<string | null> {
  const user = await User.findByPk(userId, { attributes: ['depositReference'], raw: true });
  return user?.depositReference ?? null;
}

/** Who these users are, for the own-interest rule (domain/own-interest.ts): name, phone, e-mail and KYC ID number. */
export async function identitiesOf(
  userIds: string[],
): Promise<{ id: string; full_name: string; phone: string | null; email: string; id_number: string | null }[]> {
  if (userIds.length === 0) return [];
  return queryRows(
    `SELECT u.id, u.full_name, u.phone, u.email, k.id_number
       FROM users u LEFT JOIN kyc_records k ON k.user_id = u.id WHERE u.id = ANY($1::uuid[])`,
    [userIds],
  );
}
