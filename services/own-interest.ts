import type { Caller } from '../domain/caller';
import { ownInterest, ownInterestMessage, type Party } from '../domain/own-interest';
import { AppError } from '../platform/errors';
import { identitiesOf } from '../repositories/users';

/**
 * Refuse (403) a staff decision in which the caller has an own interest (domain/own-interest.ts): `accounts`
 * are the parties with an account (read with their name, phone, e-mail and KYC ID number), `others` the
 * parties known only by what the order or the deposit says of them (a payee's phone, a payer's name).
 */
export async function refuseOwnInterest(
  caller: Caller,
  what: string,
  accounts: { role: string; userId: string | null | undefined }[],
  others: Party[] = [],
): Promise<void> {
  const ids = [...new Set([caller.id, ...accounts.flatMap((a) => (a.userId ? [a.userId] : []))])];
  const known = new Map((await identitiesOf(ids)).map((row) => [row.id, row]));
  const identity = (userId: string) => {
    const row = known.get(userId);
    return { userId, name: row?.full_name, phone: row?.phone, email: row?.email, idNumber: row?.id_number };
  };
  const parties: Party[] = [...accounts.flatMap((a) => (a.userId ? [{ role: a.role, ...identity(a.userId) }] : [])), ...others];
  const found = ownInterest(identity(caller.id), parties);
  if (found) throw new AppError('forbidden', ownInterestMessage(found, what));
}
