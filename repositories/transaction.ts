import { UniqueConstraintError, type Sequelize, type Transaction } from 'sequelize';
import { models } from '../models';

/** A database transaction, as repositories take it: work that spans aggregates runs in one of these. */
export type Tx = Transaction;

/**
 * Run `work` in one database transaction: committed when it resolves, rolled back when it throws. This is
 * how a service or an activity makes several repository calls (lock an order, post to the ledger, record
 * the event) succeed or fail together.
 */
export function inTransaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
  return models().transaction(work);
}

/**
 * Run `work` inside `tx` under a savepoint: when it throws, only what it wrote is undone and `tx` goes on.
 * How a step can try a write the database may refuse, or one it decides to take back.
 */
export function inSavepoint<T>(tx: Tx, work: (sp: Tx) => Promise<T>): Promise<T> {
  return models().transaction({ transaction: tx }, work);
}

/**
 * Bind the repositories to the process's database (once). Entry points call it at boot, so the first
 * request or job does not pay for it.
 */
export function openRepositories(sequelize?: Sequelize): void {
  models(sequelize);
}

/** Whether a write was refused because it would duplicate a unique key (an idempotency key, a provider id…). */
export const isDuplicate = (err: unknown): boolean => err instanceof UniqueConstraintError;

/**
 * Run read-only `work` in one short transaction under a statement timeout (`SET LOCAL`), so a slow
 * database makes the reads fail fast instead of piling up (metrics scrapes).
 */
export function inReadTransaction<T>(timeoutMs: number, work: (tx: Tx) => Promise<T>): Promise<T> {
  return models().transaction(async (tx) => {
    await models().query(`SET LOCAL statement_timeout = ${Math.trunc(timeoutMs)}`, { transaction: tx });
    return work(tx);
  });
}

interface PgClient {
  query<R>(text: string, values: readonly unknown[]): Promise<{ rows: R[] }>;
}

/**
 * One read straight through a pooled connection's pg client, with positional parameters (`$1`…): no
 * Sequelize query pipeline around it (replacement formatting, result handling, lodash copies). For the reads
 * on every request, where that pipeline was an eighth of the api's CPU (bench/PROFILE.md). Same pool, same
 * type parsers, same errors as any other statement.
 */
export async function selectRows<R>(text: string, values: readonly unknown[]): Promise<R[]> {
  const manager = models().connectionManager;
  const connection = await manager.getConnection({ type: 'read' });
  try {
    return (await (connection as unknown as PgClient).query<R>(text, values)).rows;
  } finally {
    manager.releaseConnection(connection);
  }
}

/** One round trip to the database, for readiness checks. */
export async function pingDatabase(): Promise<void> {
  await models().query('SELECT 1');
}
