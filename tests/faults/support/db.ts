import pg from 'pg';

/** Plain SQL against the run's database, for arranging and asserting; the processes under test have their own pools. */

let pool: pg.Pool | undefined;

export function useDatabase(url: string): void {
  pool = new pg.Pool({ connectionString: url, max: 4, application_name: 'paygate-fault-suite' });
  // The suite drops connections on purpose; an idle client of ours may be among them.
  pool.on('error', () => undefined);
}

export async function query<T extends object = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
  if (!pool) throw new Error('the fault suite database is not set up');
  const result = await pool.query<T & pg.QueryResultRow>(sql, params);
  return result.rows;
}

export async function closeDatabasePool(): Promise<void> {
  await pool?.end();
  pool = undefined;
}
