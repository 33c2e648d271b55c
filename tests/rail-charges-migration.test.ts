import { expect } from 'chai';
import { QueryTypes, type Sequelize } from 'sequelize';
import { createMigrator } from '../models/migrator';
import { ownDatabase } from './support/own-database';

/**
 * The rail-charges migration reverts cleanly (docs/wallets.md#reconciliation-line-by-line): on a database of
 * its own, migrated to just before it, then through it and back down, the ledger's kind and one-subject
 * checks are exactly what they were before, and the migrations then run up again to the end.
 */

const BEFORE_RAIL_CHARGES = '202611270100-rail-balance-queries';
const RAIL_CHARGES = '202611270100-rail-charges';

type Checks = Record<string, string>;

async function ledgerChecks(db: Sequelize): Promise<Checks> {
  const rows = await db.query<{ conname: string; def: string }>(
    `SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint
      WHERE conrelid = 'ledger_transactions'::regclass ORDER BY conname`,
    { type: QueryTypes.SELECT },
  );
  return Object.fromEntries(rows.map((r) => [r.conname, r.def]));
}

describe('the rail-charges migration taken back', () => {
  const own = ownDatabase('rail_charges');
  let db: Sequelize;
  let before_: Checks;
  let through: Checks;
  let after_: Checks;

  before(async function () {
    this.timeout(90_000);
    db = await own.open(BEFORE_RAIL_CHARGES);
    before_ = await ledgerChecks(db);
    await createMigrator(db).up({ to: RAIL_CHARGES });
    through = await ledgerChecks(db);
    await createMigrator(db).down({ to: RAIL_CHARGES });
    after_ = await ledgerChecks(db);
  });

  after(async () => {
    await own.close(db);
  });

  it('when it is applied, then rail_fee is a kind and the one-subject check knows a rail charge', () => {
    expect(through.ledger_transactions_kind_check).to.include("'rail_fee'::text");
    expect(through.ledger_transactions_one_subject).to.include('rail_charge_id');
    expect(through).to.have.property('ledger_transactions_rail_charge_once');
  });

  it('when it is taken back, then every ledger constraint is exactly what it was before it', () => {
    expect(after_).to.deep.equal(before_);
    expect(after_.ledger_transactions_kind_check).not.to.include('rail_fee');
    expect(after_.ledger_transactions_one_subject).to.include('wallet_migration');
  });

  it('when it is taken back, then a posting with no subject is still refused, and a wallet carry-over still taken', async () => {
    let refused: unknown;
    try {
      await db.query(`INSERT INTO ledger_transactions (id, kind, currency) VALUES (gen_random_uuid(), 'deposit', 'KES')`);
    } catch (err) {
      refused = err;
    }
    expect(String(refused)).to.match(/ledger_transactions_one_subject/);
    await db.query(`INSERT INTO ledger_transactions (id, kind, currency) VALUES (gen_random_uuid(), 'wallet_migration', 'KES')`);
  });

  it('when the migrations run up again after it was taken back, then they reach the end', async function () {
    this.timeout(90_000);
    await createMigrator(db).up();
    expect(await createMigrator(db).pending()).to.deep.equal([]);
    expect((await ledgerChecks(db)).ledger_transactions_one_subject).to.include('rail_charge_id');
  });
});
