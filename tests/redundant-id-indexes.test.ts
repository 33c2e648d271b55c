import { expect } from 'chai';
import { QueryTypes, type Sequelize } from 'sequelize';
import { createMigrator } from '../models/migrator';
import { insertVerifiedUser, ownDatabase } from './support/own-database';

/**
 * Newest-first pages of orders and of listed names are read through the primary key, backwards, once the indexes
 * that repeated it are gone (migration 202612030100-redundant-id-indexes): no sort, no second index to write.
 */

const MIGRATION = '202612030100-redundant-id-indexes';
const BEFORE = '202612020100-limit-usage-index';
const REPEATED = ['blocklist_entries_id_desc', 'orders_id_desc'];

describe('newest-first pages without the indexes that repeated the primary key', () => {
  const own = ownDatabase('id_indexes');
  let db: Sequelize;
  const q = <T extends object>(sql: string, replacements: Record<string, unknown> = {}) =>
    db.query<T>(sql, { replacements, type: QueryTypes.SELECT });
  const indexesOf = async (): Promise<string[]> =>
    (
      await q<{ name: string }>(`SELECT indexname AS name FROM pg_indexes WHERE indexname IN (:names) ORDER BY indexname`, {
        names: REPEATED,
      })
    ).map((r) => r.name);
  const plan = async (sql: string, replacements: Record<string, unknown> = {}): Promise<string> =>
    (await q<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, replacements)).map((r) => r['QUERY PLAN']).join('\n');

  before(async function () {
    this.timeout(90_000);
    db = await own.open(MIGRATION);
    const payer = await insertVerifiedUser(db, 'Index test');
    await q(
      `INSERT INTO orders (id, user_id, idempotency_key, amount_minor, kes_equivalent_minor, currency, method, destination,
                           description, reference, status, workflow_id, created_at, updated_at)
       SELECT gen_random_uuid(), :payer, 'k-' || g, 100, 100, 'KES', 'mobile_money', '{"phone":"+254700000001"}',
              'index test', 'R-' || g, 'completed', 'payment-' || g, now(), now()
         FROM generate_series(1, 3000) AS g`,
      { payer },
    );
    await q(
      `INSERT INTO blocklist_entries (id, type, value, match_key, reason, source)
       SELECT gen_random_uuid(), 'name', 'Name ' || g, 'name ' || g, 'index test', 'manual' FROM generate_series(1, 3000) AS g`,
    );
    await q('ANALYZE orders; ANALYZE blocklist_entries');
  });

  after(async () => {
    if (db) await own.close(db);
  });

  describe('when the migration has run', () => {
    it('then neither repeated index is left', async () => {
      expect(await indexesOf()).to.deep.equal([]);
    });

    it('then the newest orders, first page or by cursor, are read backwards through the primary key, with no sort', async () => {
      const [{ id }] = await q<{ id: string }>('SELECT id FROM orders ORDER BY id DESC OFFSET 100 LIMIT 1');
      for (const text of [
        await plan('SELECT * FROM orders o ORDER BY o.id DESC LIMIT 20'),
        await plan('SELECT * FROM orders o WHERE o.id < :before ORDER BY o.id DESC LIMIT 20', { before: id }),
      ]) {
        expect(text).to.include('Index Scan Backward using orders_pkey');
        expect(text).not.to.include('Sort');
      }
    });

    it('then the newest listed names are read backwards through the primary key, with no sort', async () => {
      const text = await plan('SELECT * FROM blocklist_entries ORDER BY id DESC LIMIT 20');
      expect(text).to.include('Index Scan Backward using blocklist_entries_pkey');
      expect(text).not.to.include('Sort');
    });
  });

  describe('when the migration is taken back, then run again', () => {
    it('then the indexes come back, and go again', async function () {
      this.timeout(30_000);
      const migrator = createMigrator(db);
      await migrator.down({ to: MIGRATION });
      expect((await migrator.executed()).map((m) => m.name))
        .to.include(BEFORE)
        .and.not.to.include(MIGRATION);
      expect(await indexesOf()).to.deep.equal(REPEATED);
      await migrator.up({ to: MIGRATION });
      expect(await indexesOf()).to.deep.equal([]);
    });
  });
});
