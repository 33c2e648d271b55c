import { createHash } from 'node:crypto';
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
export const isDuplicate = (err: unknown): boolean =>
  err instanceof UniqueConstraintError || (err instanceof Error && (err as { code?: unknown }).code === '23505');

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
  query<R>(query: string | { name: string; text: string; values: readonly unknown[] }, values?: readonly unknown[]): Promise<{ rows: R[] }>;
}

/**
 * One statement straight through pg, with positional parameters (`$1`…): no Sequelize query pipeline around
 * it (replacement formatting, model building, result handling, lodash copies). Inside `tx` it runs on that
 * transaction's connection; otherwise on a pooled one. For the statements on every request and every payment
 * step, where that pipeline was an eighth of the api's and the worker's CPU (bench/PROFILE.md). Same pool,
 * same type parsers; a unique violation is still `isDuplicate`.
 */
export async function queryRows<R>(text: string, values: readonly unknown[], tx?: Tx): Promise<R[]> {
  if (tx) return (await connectionOf(tx).query<R>(text, values)).rows;
  const manager = models().connectionManager;
  const connection = await manager.getConnection({ type: 'read' });
  try {
    return (await (connection as unknown as PgClient).query<R>(text, values)).rows;
  } finally {
    manager.releaseConnection(connection);
  }
}

const statementNames = new Map<string, string>();
/** A statement's name on every connection: its text's hash, so the same text is the same prepared statement. */
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `paygate_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    statementNames.set(text, name);
  }
  return name;
}

/**
 * `queryRows` as a prepared statement: each connection parses and plans the text once, and afterwards only the
 * parameters go over the wire (no SQL text, a shorter write per call). For the fixed statements of every request
 * and every payment step, whose text never varies; reading named columns, never `*` (a prepared statement's
 * result columns are fixed when it is prepared).
 */
export async function queryPrepared<R>(text: string, values: readonly unknown[], tx?: Tx): Promise<R[]> {
  const query = { name: statementName(text), text, values };
  if (tx) return (await connectionOf(tx).query<R>(query)).rows;
  const manager = models().connectionManager;
  const connection = await manager.getConnection({ type: 'read' });
  try {
    return (await (connection as unknown as PgClient).query<R>(query)).rows;
  } finally {
    manager.releaseConnection(connection);
  }
}

/** The pg client a Sequelize transaction runs on (set once the transaction has begun). */
function connectionOf(tx: Tx): PgClient {
  const connection = (tx as unknown as { connection?: PgClient }).connection;
  if (!connection) throw new Error('the transaction has no connection (it has not begun, or it has ended)');
  return connection;
}

/** One round trip to the database, for readiness checks. */
export async function pingDatabase(): Promise<void> {
  await models().query('SELECT 1');
}
