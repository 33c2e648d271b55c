import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { QueryTypes, type Sequelize } from 'sequelize';
import { createMigrator } from '../models/migrator';
import { ownDatabase } from './support/own-database';

/**
 * Screening decisions made before they belonged to one customer (docs/compliance.md#screening-reviews): on a
 * database of their own, migrated to just before the change, a decision on a customer's review and one on a
 * review with no customer are kept the way the old code kept them, then the rest of the migrations run.
 */

const BEFORE_PER_CUSTOMER = '202611260400-reconciliation-breaks';

describe('screening decisions kept from before they belonged to one customer', () => {
  const own = ownDatabase('decisions');
  let db: Sequelize;
  const customer = randomUUID();
  const officer = randomUUID();
  const entry = randomUUID();
  const customerHit = randomUUID();
  const anonymousHit = randomUUID();

  before(async function () {
    this.timeout(60_000);
    db = await own.open(BEFORE_PER_CUSTOMER);
    await db.query(
      `INSERT INTO users (id, email, password_hash, full_name) VALUES
         (:customer, 'customer@decisions.test', 'x', 'Old Customer'), (:officer, 'officer@decisions.test', 'x', 'Old Officer');
       INSERT INTO blocklist_entries (id, type, value, match_key, reason, source) VALUES (:entry, 'name', 'neema wairimu', 'neema wairimu', 'listed', 'manual');
       INSERT INTO screening_hits (id, context, user_id, field, screened_value, entry_id, score, verdict, review_reason, status, decided_by, decided_at)
       VALUES (:customerHit, 'registration', :customer, 'user.full_name', 'n wairimu', :entry, 0.9, 'review', 'initials', 'cleared', :officer, now()),
              (:anonymousHit, 'registration', NULL, 'user.full_name', 'neema w', :entry, 0.9, 'review', 'initials', 'confirmed', :officer, now());
       INSERT INTO screening_decisions (entry_id, screened_value, decision, hit_id, decided_by) VALUES
         (:entry, 'n wairimu', 'cleared', :customerHit, :officer), (:entry, 'neema w', 'confirmed', :anonymousHit, :officer);`,
      { replacements: { customer, officer, entry, customerHit, anonymousHit } },
    );
    await createMigrator(db).up();
  });

  after(async () => {
    await own.close(db);
  });

  it('then a decision on a customer’s review is that customer’s, and one with no customer is dropped to be reviewed again', async () => {
    const kept = await db.query<{ screened_value: string; customer_id: string; decision: string }>(
      `SELECT screened_value, customer_id, decision FROM screening_decisions
        WHERE entry_id = :entry AND (customer_id = :customer OR screened_value = 'neema w') ORDER BY screened_value`,
      { replacements: { entry, customer }, type: QueryTypes.SELECT },
    );
    expect(kept).to.deep.equal([{ screened_value: 'n wairimu', customer_id: customer, decision: 'cleared' }]);
  });

  it('then the same pair can be decided for another customer, and a decision names its customer (NOT NULL)', async () => {
    const other = randomUUID();
    await db.query(`INSERT INTO users (id, email, password_hash, full_name) VALUES (:other, 'other@decisions.test', 'x', 'Other')`, {
      replacements: { other },
    });
    await db.query(
      `INSERT INTO screening_decisions (entry_id, screened_value, customer_id, decision, hit_id, decided_by)
       VALUES (:entry, 'n wairimu', :other, 'confirmed', :customerHit, :officer)`,
      { replacements: { entry, other, customerHit, officer } },
    );
    let refused: unknown;
    try {
      await db.query(
        `INSERT INTO screening_decisions (entry_id, screened_value, decision, hit_id, decided_by) VALUES (:entry, 'x y', 'cleared', :customerHit, :officer)`,
        { replacements: { entry, customerHit, officer } },
      );
    } catch (err) {
      refused = err;
    }
    expect(String(refused)).to.match(/customer_id/);
  });
});
