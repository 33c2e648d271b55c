import { expect } from 'chai';
import { Client } from 'pg';
import { QueryTypes, type Sequelize } from 'sequelize';
import { createMigrator } from '../models/migrator';
import { insertVerifiedUser, ownDatabase } from './support/own-database';

/**
 * Monitoring's day counts kept in slots (docs/monitoring.md#history-windows): movements of one customer recorded
 * at the same moment, in transactions still open, never wait on each other's count; a movement taken away is
 * taken from a slot that has one, never below zero; the day's count is the sum of its slots. Each transaction
 * here waits at most `lock_timeout`, so a count that queued behind another would fail the test, not hang it.
 */

const BEFORE = '202611300100-payment-limits-and-hold';
const SLOTS = '202612010100-monitoring-day-slots';
const DAY = '2026-10-05';

describe('monitoring day counts in slots', () => {
  const own = ownDatabase('monitoring_slots');
  let db: Sequelize;
  const open: Client[] = [];
  const q = <T extends object>(sql: string, replacements: Record<string, unknown> = {}) =>
    db.query<T>(sql, { replacements, type: QueryTypes.SELECT });

  /** A connection of its own, closed after the test. */
  const connection = async (): Promise<Client> => {
    const client = new Client({ connectionString: own.url });
    await client.connect();
    open.push(client);
    return client;
  };
  /** A transaction of its own, on a connection of its own, that gives up on any lock after a second. */
  const transaction = async (): Promise<Client> => {
    const client = await connection();
    await client.query("BEGIN; SET LOCAL lock_timeout = '1s'");
    return client;
  };
  const orderSql = `INSERT INTO orders (id, user_id, idempotency_key, amount_minor, kes_equivalent_minor, currency, method, destination,
                                        description, reference, status, workflow_id, created_at, updated_at)
     VALUES (gen_random_uuid(), $1, gen_random_uuid()::text, 1000, 1000, 'KES', 'mobile_money', '{"phone":"+254700000001"}',
             'slots test', 'R-' || gen_random_uuid(), $2, 'payment-' || gen_random_uuid(), $3, $3) RETURNING id`;
  /** An order of the customer's on the day, in `on`'s transaction, or committed at once. */
  const recordOrder = async (on: Client | null, customer: string): Promise<string> => {
    const at = `${DAY}T10:00:00Z`;
    const { rows } = await (on ?? (await connection())).query<{ id: string }>(orderSql, [customer, 'processing', at]);
    return rows[0].id;
  };
  /**
   * Two orders of the customer's, each recorded in a transaction of its own while the other is still open (the
   * second would give up on a lock the first held), then both committed: their ids, in that order.
   */
  const recordedAtOnce = async (customer: string): Promise<[string, string]> => {
    const [first, second] = [await transaction(), await transaction()];
    const ids: [string, string] = [await recordOrder(first, customer), await recordOrder(second, customer)];
    await second.query('COMMIT');
    await first.query('COMMIT');
    return ids;
  };
  const slots = (customer: string) =>
    q<{ slot: number; movements: number }>(
      `SELECT slot, movements FROM monitoring_customer_days WHERE customer_id = :customer AND day = :day ORDER BY slot`,
      { customer, day: DAY },
    );
  const dayCount = async (customer: string) => (await slots(customer)).reduce((sum, s) => sum + s.movements, 0);
  const recounted = async (customer: string) =>
    (
      await q<{ n: number }>(
        `SELECT count(*)::int AS n FROM orders WHERE user_id = :customer AND status NOT IN ('rejected', 'failed')
            AND (created_at AT TIME ZONE 'UTC')::date = :day`,
        { customer, day: DAY },
      )
    )[0].n;
  const newCustomer = () => insertVerifiedUser(db, 'Slots test');

  before(async function () {
    this.timeout(90_000);
    db = await own.open(SLOTS);
  });

  afterEach(async () => {
    for (const client of open.splice(0)) await client.end().catch(() => undefined);
  });

  after(async () => {
    await own.close(db);
  });

  it('when two movements of one customer are recorded at once, then neither waits for the other, and the day counts both', async () => {
    const customer = await newCustomer();
    await recordOrder(null, customer);
    // The day's first slot is held by the first transaction: the second counts on a slot of its own.
    await recordedAtOnce(customer);
    expect(await slots(customer)).to.have.length(2);
    expect(await dayCount(customer)).to.equal(3);
    expect(await recounted(customer)).to.equal(3);
  });

  it('when a counted movement fails while a slot is held, then it is taken from a free slot that has one, never below zero', async () => {
    const customer = await newCustomer();
    const [failing] = await recordedAtOnce(customer);
    expect((await slots(customer)).map((s) => s.movements)).to.deep.equal([1, 1]);

    // A third transaction holds the first slot; the failure is counted off the other one at once.
    const holding = await transaction();
    await recordOrder(holding, customer);
    const failing2 = await transaction();
    await failing2.query(`UPDATE orders SET status = 'failed' WHERE id = $1`, [failing]);
    await failing2.query('COMMIT');
    await holding.query('COMMIT');
    const after = await slots(customer);
    expect(after.every((s) => s.movements >= 0)).to.equal(true);
    expect(await dayCount(customer)).to.equal(2);
    expect(await recounted(customer)).to.equal(2);
  });

  it('when the only slot with a movement is held, then taking one away waits for it, and still counts right', async () => {
    const customer = await newCustomer();
    const failing = await recordOrder(null, customer);
    const holding = await transaction();
    await recordOrder(holding, customer);
    // The one slot is held and has the movement: the failure waits, and gives up after the lock timeout.
    const waiting = await transaction();
    const refused = await waiting.query(`UPDATE orders SET status = 'failed' WHERE id = $1`, [failing]).catch((e: Error) => e);
    expect(refused)
      .to.be.instanceOf(Error)
      .with.property('message')
      .that.matches(/lock timeout/);
    await waiting.query('ROLLBACK');
    await holding.query('COMMIT');
    await q(`UPDATE orders SET status = 'failed' WHERE id = :failing RETURNING id`, { failing });
    expect(await dayCount(customer)).to.equal(1);
    expect(await recounted(customer)).to.equal(1);
  });

  it('when it is taken back, then each day is one row again with the sum of its slots, and the migrations run up again', async () => {
    const customer = await newCustomer();
    await recordedAtOnce(customer);
    expect(await slots(customer)).to.have.length(2);

    await createMigrator(db).down({ to: SLOTS });
    const rows = await q<{ day: string; movements: number }>(
      `SELECT day::text AS day, movements FROM monitoring_customer_days WHERE customer_id = :customer`,
      { customer },
    );
    expect(rows).to.deep.equal([{ day: DAY, movements: 2 }]);
    // Counted as before: one row a day.
    await recordOrder(null, customer);
    expect(await q(`SELECT movements FROM monitoring_customer_days WHERE customer_id = :customer`, { customer })).to.deep.equal([
      { movements: 3 },
    ]);

    await createMigrator(db).up();
    expect(await slots(customer)).to.deep.equal([{ slot: 0, movements: 3 }]);
    expect((await createMigrator(db).executed()).map((m) => m.name)).to.include.members([BEFORE, SLOTS]);
  });
});
