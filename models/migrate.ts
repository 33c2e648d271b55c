import { Client } from 'pg';
import { configOrExit } from '../platform/config';
import { createSequelize } from '../platform/database';
import { componentLogger } from '../platform/logger';
import { createMigrator } from './migrator';

/** Create the database named in DATABASE_URL when it does not exist yet. */
export async function ensureDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!/^[A-Za-z0-9_-]+$/.test(name)) throw new Error(`unsupported database name "${name}"`);
  url.pathname = '/postgres';
  const admin = new Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
}

export async function migrateUp(databaseUrl: string): Promise<string[]> {
  await ensureDatabase(databaseUrl);
  const sequelize = createSequelize(databaseUrl, 2);
  try {
    const applied = await createMigrator(sequelize).up();
    return applied.map((m) => m.name);
  } finally {
    await sequelize.close();
  }
}

async function main(): Promise<void> {
  const cfg = configOrExit();
  const log = componentLogger('migrate');
  const command = process.argv[2] ?? 'up';
  if (command === 'up') {
    const applied = await migrateUp(cfg.databaseUrl);
    log.info({ applied }, applied.length ? 'migrations applied' : 'schema up to date');
  } else if (command === 'down') {
    const sequelize = createSequelize(cfg.databaseUrl, 2);
    const reverted = await createMigrator(sequelize).down();
    await sequelize.close();
    log.info({ reverted: reverted.map((m) => m.name) }, 'migration reverted');
  } else {
    throw new Error(`unknown command "${command}" (expected up or down)`);
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    componentLogger('migrate').fatal({ err }, 'migration failed');
    process.exit(1);
  });
}
