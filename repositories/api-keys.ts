import { Op, QueryTypes } from 'sequelize';
import { ApiKey, models } from '../models';
import type { ApiKeyMode } from '../domain/api-keys';
import type { Tx } from './transaction';

/** API keys (`api_keys`): every read and write of them. Only a hash of each secret is ever stored. */

export interface ApiKeyRecord {
  id: string;
  userId: string;
  name: string;
  mode: ApiKeyMode;
  prefix: string;
  scopes: string[];
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  expiresAt: Date | null;
}

const record = (k: ApiKey): ApiKeyRecord => ({
  id: k.id,
  userId: k.userId,
  name: k.name,
  mode: k.mode,
  prefix: k.prefix,
  scopes: k.scopes,
  createdAt: k.createdAt,
  lastUsedAt: k.lastUsedAt ?? null,
  revokedAt: k.revokedAt ?? null,
  expiresAt: k.expiresAt ?? null,
});

/**
 * Create a key unless the user already has `maxActive` keys in use (neither revoked nor expired): then null.
 * Creations for one user are serialised by a transaction-scoped advisory lock on the user (held until `transaction`
 * ends), so concurrent requests cannot both see room for the last key.
 */
export async function createApiKeyWithin(
  key: {
    id: string;
    userId: string;
    name: string;
    mode: ApiKeyMode;
    prefix: string;
    secretHash: Buffer;
    scopes: string[];
    expiresAt: Date | null;
  },
  maxActive: number,
  transaction: Tx,
): Promise<ApiKeyRecord | null> {
  await models().query(`SELECT pg_advisory_xact_lock(hashtextextended('api_keys:' || CAST(:userId AS text), 0))`, {
    replacements: { userId: key.userId },
    transaction,
  });
  // A statement of its own: its snapshot is taken after the lock, so it sees what the previous holder inserted.
  const [count] = await models().query<{ active: number }>(
    `SELECT count(*)::int AS active FROM api_keys
      WHERE user_id = :userId AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())`,
    { replacements: { userId: key.userId }, type: QueryTypes.SELECT, transaction },
  );
  if ((count?.active ?? 0) >= maxActive) return null;
  return record(await ApiKey.create(key, { transaction }));
}

/** The key a presented secret's prefix names, with its hash to compare; revoked and expired keys are not found. */
export async function activeKeyByPrefix(prefix: string): Promise<(ApiKeyRecord & { secretHash: Buffer }) | null> {
  const key = await ApiKey.findOne({
    where: { prefix, revokedAt: null, [Op.or]: [{ expiresAt: null }, { expiresAt: { [Op.gt]: models().fn('now') } }] },
  });
  return key ? { ...record(key), secretHash: key.secretHash } : null;
}

/** A user's keys, revoked ones included, newest first, keyset-paged on the (time-ordered) id. */
export async function listApiKeys(userId: string, before: string | null, take: number): Promise<ApiKeyRecord[]> {
  const keys = await ApiKey.findAll({
    where: { userId, ...(before ? { id: { [Op.lt]: before } } : {}) },
    order: [['id', 'DESC']],
    limit: take,
  });
  return keys.map(record);
}

export async function findApiKey(keyId: string): Promise<ApiKeyRecord | null> {
  const key = await ApiKey.findByPk(keyId);
  return key ? record(key) : null;
}

/** Revoke the key, once: returns false when it was already revoked (or is not this user's). */
export async function revokeApiKey(keyId: string, userId: string, tx?: Tx): Promise<boolean> {
  const [n] = await ApiKey.update({ revokedAt: new Date() }, { where: { id: keyId, userId, revokedAt: null }, transaction: tx });
  return n > 0;
}

/** Note that the key was used: at most one write a minute per key, by a conditional update. */
export async function touchApiKey(keyId: string): Promise<void> {
  const now = new Date();
  await ApiKey.update(
    { lastUsedAt: now },
    { where: { id: keyId, [Op.or]: [{ lastUsedAt: null }, { lastUsedAt: { [Op.lt]: new Date(now.getTime() - 60_000) } }] } },
  );
}
