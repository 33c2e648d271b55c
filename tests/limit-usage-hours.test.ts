import { expect } from 'chai';
import { Client } from 'pg';
import { QueryTypes, type Sequelize } from 'sequelize';
import { createMigrator } from '../models/migrator';
import { insertVerifiedUser, ownDatabase } from './support/own-database';

/**
 * A payer's 24-hour usage from hourly sums (docs/payments.md#admission): whatever happens to the payer's orders
 * (created over the last day and more, checked, rejected, failed, moved to another hour or payer, deleted), the
 * usage read from the sums equals the sum over the orders themselves, the definition it replaces; two
 * transactions changing orders of one payer in one hour never wait on each other; and the migration goes back and
 * forth with the same answer.
 */

const HOURS = '202612040100-limit-usage-hours';

/** What counts towards the 24-hour limit, read from every order (the definition before the hourly sums). */
const FROM_ORDERS = `SELECT coalesce(sum(kes_equivalent_minor), 0)::text AS used FROM orders
                      WHERE user_id = $1 AND id IS DISTINCT FROM $2 AND limits_checked_at IS NOT NULL
                        AND status NOT IN ('rejected', 'failed') AND created_at > now() - interval '24 hours'`;

/** A small deterministic generator, so that a failing history can be run again from its seed. */
function generator(seed: number): (n: number) => number {
  let s = seed >>> 0;
  return (n) => {
    s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    return s % n;
  };
}

describe('the 24-hour usage from hourly sums', () => {
  const own = ownDatabase('limit_usage_hours');
  let db: Sequelize;
  let client: Client;
  const open: Client[] = [];
  const q = <T extends object>(sql: string, replacements: Record<string, unknown> = {}) =>
    db.query<T>(sql, { replacements, type: QueryTypes.SELECT });

  const orderSql = `INSERT INTO orders (id, user_id, idempotency_key, amount_minor, kes_equivalent_minor, currency, method, destination,
                                        description, reference, status, workflow_id, limits_checked_at, created_at, updated_at)
     VALUES (gen_random_uuid(), $1, gen_random_uuid()::text, $2, $2, 'KES', 'mobile_money', '{"phone":"+254700000001"}',
             'usage test', 'R-' || gen_random_uuid(), $3, 'payment-' || gen_random_uuid(),
             CASE WHEN $4::boolean THEN now() END, now() - $5::interval, now()) RETURNING id`;
  const order = async (payer: string, kes: number, status: string, checked: boolean, ago: string, on: Client = client) =>
    (await on.query<{ id: string }>(orderSql, [payer, kes, status, checked, ago])).rows[0].id;
  const usage = async (payer: string, except: string | null = null) =>
    (await client.query<{ used: string }>('SELECT order_limit_usage($1, $2)::text AS used', [payer, except])).rows[0].used;
  const fromOrders = async (payer: string, except: string | null = null) =>
    (await client.query<{ used: string }>(FROM_ORDERS, [payer, except])).rows[0].used;

  before(async function () {
    this.timeout(90_000);
    db = await own.open(HOURS);
    client = new Client({ connectionString: own.url });
    await client.connect();
  });

  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.end().catch(() => undefined)));
  });

  after(async () => {
    await client?.end().catch(() => undefined);
    await own.close(db);
  });

  it('when a payer’s orders are made, checked, ended and moved at random over 26 hours, then the usage always equals the sum over the orders', async function () {
    this.timeout(60_000);
    for (const seed of [1, 2, 3, 4, 5]) {
      const next = generator(seed);
      const payer = await insertVerifiedUser(db, `Usage ${seed}`);
      const other = await insertVerifiedUser(db, `Other ${seed}`);
      const ids: string[] = [];
      for (let step = 0; step < 120; step++) {
        const pick = ids.length > 0 ? ids[next(ids.length)] : null;
        const action = pick ? next(7) : 0;
        if (action === 0 || action === 1) {
          // An order made some minutes into the last 26 hours: the hour the window starts in, and before it, included.
          const status = ['pending', 'screening', 'processing', 'completed', 'rejected', 'failed'][next(6)];
          ids.push(await order(payer, 1 + next(5000), status, next(3) > 0, `${next(26 * 60)} minutes`));
        } else if (action === 2) {
          await client.query('UPDATE orders SET limits_checked_at = now() WHERE id = $1 AND limits_checked_at IS NULL', [pick]);
        } else if (action === 3) {
          await client.query('UPDATE orders SET status = $2 WHERE id = $1', [pick, ['failed', 'rejected', 'completed'][next(3)]]);
        } else if (action === 4) {
          // Moved to another hour (an order's creation time never changes in Paygate; the sums follow it all the same).
          await client.query(`UPDATE orders SET created_at = now() - $2::interval WHERE id = $1`, [pick, `${next(26 * 60)} minutes`]);
        } else if (action === 5) {
          await client.query('UPDATE orders SET user_id = $2 WHERE id = $1', [pick, next(2) === 0 ? other : payer]);
        } else {
          await client.query('DELETE FROM orders WHERE id = $1', [pick]);
          ids.splice(ids.indexOf(pick as string), 1);
        }
        if (step % 10 === 9) {
          const except = ids.length > 0 ? ids[next(ids.length)] : null;
          for (const who of [payer, other]) {
            expect(await usage(who), `seed ${seed}, step ${step}`).to.equal(await fromOrders(who));
            expect(await usage(who, except), `seed ${seed}, step ${step}, except`).to.equal(await fromOrders(who, except));
          }
        }
      }
    }
  });

  it('when two transactions check orders of one payer in the same hour, then neither waits for the other, and both count', async () => {
    const payer = await insertVerifiedUser(db, 'At once');
    const [a, b] = [await order(payer, 300, 'screening', false, '0 seconds'), await order(payer, 400, 'screening', false, '0 seconds')];
    const transaction = async () => {
      const c = new Client({ connectionString: own.url });
      await c.connect();
      open.push(c);
      await c.query("BEGIN; SET LOCAL lock_timeout = '1s'");
      return c;
    };
    const [first, second] = [await transaction(), await transaction()];
    await first.query('UPDATE orders SET limits_checked_at = now() WHERE id = $1', [a]);
    // Would give up on the first's lock, were the hour's sum one row.
    await second.query('UPDATE orders SET limits_checked_at = now() WHERE id = $1', [b]);
    expect(await usage(payer)).to.equal('0');
    await second.query('COMMIT');
    await first.query('COMMIT');
    expect(await usage(payer)).to.equal('700');
    const slots = await q<{ n: number }>('SELECT count(*)::int AS n FROM order_limit_usage_hours WHERE user_id = :payer', { payer });
    expect(slots[0].n).to.equal(2);

    // One of them failing is taken away again, without waiting on the other's open transaction either.
    const [third, fourth] = [await transaction(), await transaction()];
    await third.query(`UPDATE orders SET status = 'failed' WHERE id = $1`, [a]);
    await fourth.query(`UPDATE orders SET status = 'completed' WHERE id = $1`, [b]);
    await fourth.query(
      `INSERT INTO orders (id, user_id, idempotency_key, amount_minor, kes_equivalent_minor, currency, method, destination,
                          description, reference, status, workflow_id, limits_checked_at)
                        VALUES (gen_random_uuid(), $1, gen_random_uuid()::text, 50, 50, 'KES', 'mobile_money', '{"phone":"+254700000001"}',
                                'usage test', 'R-' || gen_random_uuid(), 'processing', 'payment-' || gen_random_uuid(), now())`,
      [payer],
    );
    await third.query('COMMIT');
    await fourth.query('COMMIT');
    expect(await usage(payer)).to.equal('450');
    expect(await usage(payer)).to.equal(await fromOrders(payer));
  });

  it('when the migration is taken back and applied again, then the usage is the same either way', async () => {
    const payer = await insertVerifiedUser(db, 'Back and forth');
    await order(payer, 250, 'processing', true, '3 hours');
    await order(payer, 125, 'completed', true, '23 hours 50 minutes');
    await order(payer, 900, 'completed', true, '25 hours');
    await order(payer, 80, 'failed', true, '1 hour');
    await order(payer, 9, 'pending', false, '1 minute');
    expect(await usage(payer)).to.equal('375');

    await createMigrator(db).down({ to: HOURS });
    const tables = async () =>
      (await q<{ n: number }>(`SELECT count(*)::int AS n FROM pg_class WHERE relname = 'order_limit_usage_hours'`))[0].n;
    expect(await tables()).to.equal(0);
    expect(await usage(payer)).to.equal('375');
    await order(payer, 5, 'processing', true, '2 hours');

    await createMigrator(db).up();
    expect(await tables()).to.equal(1);
    expect(await usage(payer)).to.equal('380');
    expect(await usage(payer)).to.equal(await fromOrders(payer));
  });
});
