import { randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize } from 'sequelize';
import { createMigrator } from '../../models/migrator';
import { ensureDatabase } from '../../models/migrate';
import { reloadConfig } from '../../platform/config';
import { createSequelize } from '../../platform/database';
import { dropDatabase } from './local-tools';

/**
 * A database of a migration test's own, beside the run's (its name with `_<suffix>`): made anew and migrated up
 * to a given migration, so the test can take that migration back and forth without touching the shared schema.
 */
export function ownDatabase(suffix: string): {
  /** The database's address, for a test that needs connections of its own (transactions side by side). */
  url: string;
  open(to: string): Promise<Sequelize>;
  close(db: Sequelize): Promise<void>;
} {
  const u = new URL(reloadConfig().databaseUrl);
  u.pathname = `${u.pathname}_${suffix}`;
  const url = u.toString();
  return {
    url,
    async open(to) {
      await dropDatabase(url);
      await ensureDatabase(url);
      const db = createSequelize(url, 2);
      await createMigrator(db).up({ to });
      return db;
    },
    async close(db) {
      await db.close();
      await dropDatabase(url);
    },
  };
}

/**
 * A verified user straight in the database (no login: a migration test's database has no api), its id `id` or a new
 * one, created `createdAgo` before now.
 */
export async function insertVerifiedUser(db: Sequelize, label: string, id = randomUUID(), createdAgo = '0 seconds'): Promise<string> {
  await db.query(
    `INSERT INTO users (id, email, password_hash, full_name, kyc_status, created_at, updated_at)
     VALUES (:id, :email, 'not-a-login', :label, 'verified', now() - :createdAgo::interval, now())`,
    { replacements: { id, email: `${id}@example.com`, label, createdAgo }, type: QueryTypes.INSERT },
  );
  return id;
}
