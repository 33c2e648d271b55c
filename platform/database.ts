import pg from 'pg';
import { Sequelize } from 'sequelize';
import { config } from './config';
import { componentLogger } from './logger';

// NUMERIC and BIGINT stay strings: money never passes through a float.
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => v);
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => v);

let instance: Sequelize | undefined;

export function createSequelize(url: string = config().databaseUrl, poolMax = config().databasePoolMax): Sequelize {
  const log = componentLogger('db');
  return new Sequelize(url, {
    dialect: 'postgres',
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
