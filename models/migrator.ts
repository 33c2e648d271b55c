import path from 'node:path';
import type { Sequelize } from 'sequelize';
import { SequelizeStorage, Umzug, type MigrationFn } from 'umzug';
import { componentLogger } from '../platform/logger';

export type Migration = MigrationFn<Sequelize>;

/** Versioned migrations, kept in `models/migrations`, applied in name order and recorded in `schema_migrations`. */
export function createMigrator(sequelize: Sequelize): Umzug<Sequelize> {
  const log = componentLogger('migrate');
  return new Umzug({
    migrations: {
      glob: ['migrations/*.js', { cwd: __dirname, ignore: ['**/*.d.ts'] }],
      resolve: ({ name, path: file, context }) => {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const migration = require(file!) as { up: Migration; down: Migration };
        const params = { name: path.basename(name, '.js'), path: file, context };
        return { name: params.name, up: () => migration.up(params), down: () => migration.down(params) };
      },
    },
    context: sequelize,
    storage: new SequelizeStorage({ sequelize, tableName: 'schema_migrations' }),
    logger: {
      info: (m) => log.info(m, 'migration'),
      warn: (m) => log.warn(m, 'migration'),
      error: (m) => log.error(m, 'migration'),
      debug: (m) => log.debug(m, 'migration'),
    },
  });
}
