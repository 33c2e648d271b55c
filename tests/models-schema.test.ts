import { expect } from 'chai';
import { models } from '../models';
import { rows } from './support/db';

/** The migrations' own bookkeeping, owned by the migrator rather than by a repository. */
const MIGRATOR_TABLES = ['schema_migrations'];

describe('the models against the migrated schema', () => {
  it('when a table is migrated, then a model maps it, and every model maps a table', async () => {
    // Aliased: Sequelize rewrites the result of a query that starts `SELECT table_name FROM information_schema.tables`.
    const tables = await rows<{ name: string }>(
      `SELECT t.table_name AS name FROM information_schema.tables t
        WHERE t.table_schema = current_schema() AND t.table_type = 'BASE TABLE' ORDER BY t.table_name`,
    );
    const mapped = Object.values(models().models).map((m) => m.getTableName() as string);
    expect(tables.map((t) => t.name).filter((t) => !MIGRATOR_TABLES.includes(t))).to.have.members(mapped);
  });

  it('when a model is read, then its attributes are exactly its table columns, with the same nullability', async () => {
    const columns = await rows<{ table_name: string; column_name: string; is_nullable: 'YES' | 'NO' }>(
      `SELECT table_name, column_name, is_nullable FROM information_schema.columns WHERE table_schema = current_schema()`,
    );
    const mismatches: string[] = [];
    for (const model of Object.values(models().models)) {
      const table = model.getTableName() as string;
      const ofTable = new Map(columns.filter((c) => c.table_name === table).map((c) => [c.column_name, c.is_nullable === 'YES']));
      const attributes = Object.values(model.getAttributes());
      const fields = new Set(attributes.map((a) => a.field!));
      for (const column of ofTable.keys()) if (!fields.has(column)) mismatches.push(`${model.name} lacks ${table}.${column}`);
      for (const a of attributes) {
        if (!ofTable.has(a.field!)) mismatches.push(`${model.name}.${a.field} is not a column of ${table}`);
        else if (!a.primaryKey && (a.allowNull !== false) !== ofTable.get(a.field!))
          mismatches.push(`${model.name}.${a.field} allowNull differs from ${table}`);
      }
    }
    expect(mismatches).to.deep.equal([]);
  });
});
