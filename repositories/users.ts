import { QueryTypes, type Transaction } from 'sequelize';
import { User, models } from '../models';
import type { KycStatus, Role } from '../domain/users';

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
export async function kycStatusOf(userId: string): Promise<KycStatus | null> {
  const [row] = await models().query<{ kyc_status: KycStatus }>('SELECT kyc_status FROM users WHERE id = :userId', {
    replacements: { userId },
    type: QueryTypes.SELECT,
  });
  return row?.kyc_status ?? null;
}

/** The user's roles as stored now, or null when there is no such user (read on every authenticated request). */
export async function rolesOf(userId: string): Promise<Role[] | null> {
  const user = await User.findByPk(userId, { attributes: ['roles'], raw: true });
  return user?.roles ?? null;
}
