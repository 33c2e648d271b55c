import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { QueryTypes, type Sequelize } from 'sequelize';
import { createMigrator } from '../models/migrator';
import { insertVerifiedUser, ownDatabase } from './support/own-database';

/**
 * The migration that adds monitoring's per-day counts (docs/monitoring.md#history-windows): on a database of its
 * own with orders and deposits already recorded, it counts them per customer and UTC day, leaving out refused
 * and failed movements and deposits nobody owns; taken back, it leaves nothing behind, and the migrations then
 * run up again to the end.
 */

const BEFORE = '202611271300-payout-batches';
const DAYS = '202611280400-monitoring-customer-days';

describe('the monitoring day-counts migration', () => {
  const own = ownDatabase('monitoring_days');
  const customer = randomUUID();
  const other = randomUUID();
  let db: Sequelize;
  const q = <T extends object>(sql: string, replacements: Record<string, unknown> = {}) =>
    db.query<T>(sql, { replacements, type: QueryTypes.SELECT });

  const order = (user: string, status: string, at: string) =>
    q(
      `INSERT INTO orders (id, user_id, idempotency_key, amount_minor, kes_equivalent_minor, currency, method, destination,
                           description, reference, status, workflow_id, created_at, updated_at)
       VALUES (gen_random_uuid(), :user, gen_random_uuid()::text, 1000, 1000, 'KES', 'mobile_money', '{"phone":"+254700000001"}',
               'migration test', 'R-' || gen_random_uuid(), :status, 'payment-' || gen_random_uuid(), :at, :at) RETURNING id`,
      { user, status, at },
    );
  const deposit = (user: string | null, status: string, at: string) =>
    q(
      `INSERT INTO deposits (user_id, channel, rail, currency, amount_minor, status, provider_reference, payer_phone, created_at, updated_at)
       VALUES (:user, 'mpesa_c2b', 'sandbox', 'KES', 1000, :status, 'MIG' || gen_random_uuid(), '+254700000002', :at, :at) RETURNING id`,
      { user, status, at },
    );
  const counts = () =>
    q<{ customer_id: string; day: string; movements: number }>(
      `SELECT customer_id, day::text AS day, movements FROM monitoring_customer_days ORDER BY customer_id, day`,
    );

  before(async function () {
    this.timeout(90_000);
    db = await own.open(BEFORE);
    for (const id of [customer, other]) await insertVerifiedUser(db, 'Migration test', id);
    await order(customer, 'completed', '2026-10-01T23:59:59Z');
    await order(customer, 'processing', '2026-10-01T08:00:00Z');
    await order(customer, 'failed', '2026-10-01T09:00:00Z');
    await order(customer, 'rejected', '2026-10-02T09:00:00Z');
    await deposit(customer, 'completed', '2026-10-02T00:00:00Z');
    await deposit(customer, 'failed', '2026-10-02T01:00:00Z');
    await deposit(null, 'unmatched', '2026-10-02T02:00:00Z');
    await deposit(other, 'completed', '2026-10-03T12:00:00Z');
    await createMigrator(db).up({ to: DAYS });
  });

  after(async () => {
    await own.close(db);
  });

  it('when it is applied over recorded movements, then each customer day counts those neither refused nor failed', async () => {
    const expected = [
      { customer_id: customer, day: '2026-10-01', movements: 2 },
      { customer_id: customer, day: '2026-10-02', movements: 1 },
      { customer_id: other, day: '2026-10-03', movements: 1 },
    ].sort((x, y) => (x.customer_id === y.customer_id ? 0 : x.customer_id < y.customer_id ? -1 : 1));
    expect(await counts()).to.deep.equal(expected);
  });

  it('when a counted order then fails, then its day counts one fewer, and a decrement never goes below zero', async () => {
    await q(`UPDATE orders SET status = 'failed' WHERE user_id = :customer AND status = 'processing' RETURNING id`, { customer });
    const day = (await counts()).find((c) => c.customer_id === customer && c.day === '2026-10-01');
    expect(day?.movements).to.equal(1);
    const refused = await q(`UPDATE monitoring_customer_days SET movements = -1 WHERE customer_id = :customer RETURNING day`, {
      customer,
    }).catch((e: Error) => e);
    expect(refused).to.be.instanceOf(Error);
  });

  it('when it is taken back, then its table and functions are gone, and the migrations run up again to the end', async () => {
    await createMigrator(db).down({ to: DAYS });
    const left = await q<{ name: string }>(
      `SELECT proname AS name FROM pg_proc
        WHERE proname IN ('monitoring_history', 'monitoring_customer_days_count', 'monitoring_orders_counted',
                          'monitoring_deposits_counted', 'monitoring_customer_days_cleared')
       UNION ALL SELECT tgname FROM pg_trigger WHERE tgname ~ '_monitoring_(counted|recounted|cleared)$'
       UNION ALL SELECT relname FROM pg_class WHERE relname = 'monitoring_customer_days'`,
    );
    expect(left).to.deep.equal([]);
    await order(customer, 'completed', '2026-10-04T00:00:00Z');
    await createMigrator(db).up();
    expect((await counts()).filter((c) => c.customer_id === customer).map((c) => [c.day, c.movements])).to.deep.equal([
      ['2026-10-01', 1],
      ['2026-10-02', 1],
      ['2026-10-04', 1],
    ]);
  });
});
