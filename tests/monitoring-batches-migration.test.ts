import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { QueryTypes, type Sequelize } from 'sequelize';
import { createMigrator } from '../models/migrator';
import { insertVerifiedUser, ownDatabase } from './support/own-database';

/**
 * The migration that teaches monitoring bulk payouts (docs/monitoring.md#bulk-payouts), on a database of its own
 * holding a batch of three orders and one single order: applied, an item's history leaves its siblings out and
 * another movement counts the batch as one; taken back, the history reads as before and new batch evaluations are
 * refused while the one kept stays; the migrations then run up again to the end.
 */

const DAYS = '202611280400-monitoring-customer-days';
const BATCHES = '202611290100-monitoring-batches';

interface History {
  out_count: number;
  out_sum: string;
  distinct_payees: number;
}

describe('the monitoring bulk-payouts migration', () => {
  const own = ownDatabase('monitoring_batches');
  const customer = randomUUID();
  const batch = randomUUID();
  let items: string[] = [];
  let db: Sequelize;
  const q = <T extends object>(sql: string, replacements: Record<string, unknown> = {}) =>
    db.query<T>(sql, { replacements, type: QueryTypes.SELECT });

  const order = async (batchId: string | null) => {
    const [row] = await q<{ id: string }>(
      `INSERT INTO orders (id, user_id, idempotency_key, amount_minor, kes_equivalent_minor, currency, method, destination,
                           description, reference, status, workflow_id, payout_batch_id, created_at, updated_at)
       VALUES (gen_random_uuid(), :customer, gen_random_uuid()::text, 1000, 1000, 'KES', 'mobile_money',
               jsonb_build_object('phone', '+2547' || floor(random() * 100000000)::text), 'migration test',
               'R-' || gen_random_uuid(), 'completed', 'payment-' || gen_random_uuid(), :batchId,
               now() - interval '1 hour', now() - interval '1 hour')
       RETURNING id`,
      { customer, batchId },
    );
    return row.id;
  };

  /** The recent window (the last 24 hours) around `movement` of `kind`, as the function reads it. */
  const history = async (movement: string, kind: string): Promise<History> => {
    const [row] = await q<History>(
      `SELECT out_count, out_sum, distinct_payees FROM monitoring_history(
         :customer, :movement, :movement, :kind, '', 'null', now(), now() - interval '24 hours', now() - interval '24 hours',
         now() - interval '24 hours', now() - interval '24 hours', now() - interval '24 hours', now() - interval '24 hours',
         now() - interval '24 hours', now() - interval '24 hours', current_date, current_date, current_date, current_date,
         90000000, 100000000, 1000000, 1000000)`,
      { customer, movement, kind },
    );
    return row;
  };

  const evaluation = (kind: string) =>
    q(
      `INSERT INTO monitoring_evaluations (id, movement_kind, movement_id, customer_id, rule_set_version, rule_results,
                                           typology_scores, decision)
       VALUES (gen_random_uuid(), :kind, :batch, :customer, 1, '{}', '{}', 'pass') RETURNING id`,
      { kind, batch, customer },
    );

  before(async function () {
    this.timeout(90_000);
    db = await own.open(DAYS);
    await insertVerifiedUser(db, 'Migration test', customer, '30 days');
    await q(
      `INSERT INTO payout_batches (id, user_id, idempotency_key, currency, item_count, total_amount_minor, total_fee_minor,
                                   workflow_id, status)
       VALUES (:batch, :customer, 'migration-test', 'KES', 3, 3000, 0, 'payout-batch-' || :batch, 'completed') RETURNING id`,
      { batch, customer },
    );
    items = [await order(batch), await order(batch), await order(batch)];
    await order(null);
    await q(`INSERT INTO monitoring_rule_sets (version, parameters) VALUES (1, '{}') RETURNING version`);
    await createMigrator(db).up({ to: BATCHES });
  });

  after(async () => {
    await own.close(db);
  });

  it('when it is applied, then an item leaves its siblings out, and another movement counts the batch once with all its money', async () => {
    expect(await history(items[0], 'payout')).to.deep.equal({ out_count: 1, out_sum: '1000', distinct_payees: 1 });
    expect(await history(randomUUID(), 'payout')).to.deep.equal({ out_count: 2, out_sum: '4000', distinct_payees: 2 });
    expect(await history(batch, 'payout_batch')).to.deep.equal({ out_count: 1, out_sum: '1000', distinct_payees: 1 });
    expect(await evaluation('payout_batch')).to.have.length(1);
  });

  it('when it is taken back, then every order counts again, a new batch evaluation is refused, and the migrations run up again', async () => {
    await createMigrator(db).down({ to: BATCHES });
    expect(await history(items[0], 'payout')).to.deep.equal({ out_count: 3, out_sum: '3000', distinct_payees: 3 });
    expect(await history(randomUUID(), 'payout')).to.deep.equal({ out_count: 4, out_sum: '4000', distinct_payees: 4 });
    const refused = await evaluation('payout_batch').catch((e: Error) => e);
    expect(refused).to.be.instanceOf(Error);
    const [kept] = await q<{ n: number }>(`SELECT count(*)::int AS n FROM monitoring_evaluations WHERE movement_kind = 'payout_batch'`);
    expect(kept.n).to.equal(1);
    await createMigrator(db).up();
    expect(await history(items[1], 'payout')).to.deep.equal({ out_count: 1, out_sum: '1000', distinct_payees: 1 });
    expect(await evaluation('payout_batch')).to.have.length(1);
  });
});
