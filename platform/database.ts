import pg from 'pg';
import { Sequelize } from 'sequelize';
import { config } from './config';
import { componentLogger } from './logger';

// NUMERIC and BIGINT stay strings: money never passes through a float.
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => v);
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => v);

/**
 * A pg client never without an 'error' listener. Sequelize attaches its own only after the connection has
 * connected, a moment too late when the server drops the connection right then (a restart, a failover,
 * `pg_terminate_backend`): the error would be unhandled and kill the process. Sequelize's listener, once
 * attached, still takes the broken connection out of its pool.
 */
class GuardedClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    this.on('error', (err: Error) => componentLogger('db').warn({ err: err.message }, 'database connection lost'));
  }
}
const guardedPg: typeof pg = Object.assign(Object.create(pg) as typeof pg, { Client: GuardedClient });

let instance: Sequelize | undefined;

export function createSequelize(url: string = config().databaseUrl, poolMax = config().databasePoolMax): Sequelize {
  const log = componentLogger('db');
  return new Sequelize(url, {
    dialect: 'postgres',
    dialectModule: guardedPg,
    logging: (sql) => log.trace({ sql }, 'query'),
    pool: { max: poolMax, min: 0, idle: 10_000, acquire: 15_000 },
    define: { underscored: true, timestamps: false },
    dialectOptions: { application_name: `paygate-${process.title}` },
  });
}

/** The process-wide Sequelize instance. */
export function database(): Sequelize {
  instance ??= createSequelize();
  return instance;
}

export async function closeDatabase(): Promise<void> {
  if (instance) {
    const closing = instance;
    instance = undefined;
    await closing.close();
  }
}
