import { expect } from 'chai';
import { Client } from 'pg';
import { QueryTypes, type Sequelize } from 'sequelize';
import { createMigrator } from '../models/migrator';
import { insertVerifiedUser, ownDatabase } from './support/own-database';

/**
 * A payer's 24-hour usage (docs/payments.md#admission) is read through the index made for it, whatever the
 * statistics know: here they were gathered before the payer existed, when another payer held every order, and
 * the payer now has thousands of orders whose limits were not checked yet. Every plan the read takes is logged
 * to the test's connection (`auto_explain`), and each must go through `orders_limit_usage`.
 */

const USAGE_INDEX = '202612020100-limit-usage-index';

describe('the 24-hour usage read', () => {
  const own = ownDatabase('limit_usage');
  let db: Sequelize;
  let explained: Client;
  const plans: string[] = [];
  const q = <T extends object>(sql: string, replacements: Record<string, unknown> = {}) =>
    db.query<T>(sql, { replacements, type: QueryTypes.SELECT });

  const newPayer = () => insertVerifiedUser(db, 'Usage test');
  /** `count` orders of the payer's, `ago` before now (spread over `spread`), checked or not, in one status. */
  const orders = async (
    payer: string,
    count: number,
    o: { kes: number; ago: string; spread?: string; checked: boolean; status?: string },
  ) =>
    (
      await q<{ id: string }>(
        `INSERT INTO orders (id, user_id, idempotency_key, amount_minor, kes_equivalent_minor, currency, method, destination,
                             description, reference, status, workflow_id, limits_checked_at, created_at, updated_at)
         SELECT gen_random_uuid(), :payer, gen_random_uuid()::text, :kes, :kes, 'KES', 'mobile_money', '{"phone":"+254700000001"}',
                'usage test', 'R-' || g, :status, 'payment-' || gen_random_uuid(), CASE WHEN :checked THEN t END, t, t
           FROM (SELECT g, now() - :ago::interval - g * (:spread::interval / :count::int) AS t
                   FROM generate_series(1, :count::int) AS g) AS s
         RETURNING id`,
        { payer, count, kes: o.kes, ago: o.ago, spread: o.spread ?? '0 seconds', checked: o.checked, status: o.status ?? 'processing' },
      )
    ).map((r) => r.id);
  const usage = async (payer: string, except: string | null = null): Promise<string> => {
    const { rows } = await explained.query<{ used: string }>('SELECT order_limit_usage($1, $2)::text AS used', [payer, except]);
    return rows[0].used;
  };

  before(async function () {
    this.timeout(90_000);
    db = await own.open(USAGE_INDEX);
    // Statistics from a time when one payer held every order, and all of them were checked.
    const seasoned = await newPayer();
    await orders(seasoned, 5000, { kes: 1000, ago: '1 minute', spread: '30 days', checked: true, status: 'completed' });
    await q('ANALYZE orders');

    explained = new Client({ connectionString: own.url });
    await explained.connect();
    await explained.query(`LOAD 'auto_explain'`);
    await explained.query(
      `SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on; SET client_min_messages = log`,
    );
    explained.on('notice', (notice) => {
      if (/Query Text: \(SELECT coalesce\(sum/.test(notice.message ?? '')) plans.push(notice.message ?? '');
    });
  });

  beforeEach(() => {
    plans.length = 0;
  });

  after(async () => {
    await explained?.end().catch(() => undefined);
    await own.close(db);
  });

  it('when the statistics do not know the payer, then every read goes through its index and sums only what counts', async () => {
    const payer = await newPayer();
    await orders(payer, 2000, { kes: 7, ago: '1 minute', checked: false, status: 'pending' });
    const [first] = await orders(payer, 3, { kes: 100, ago: '1 hour', spread: '1 hour', checked: true });
    await orders(payer, 1, { kes: 400, ago: '2 hours', checked: true, status: 'failed' });
    await orders(payer, 1, { kes: 500, ago: '25 hours', checked: true, status: 'completed' });

    // Past the first few calls a function's plan may be cached in its generic form: every one must hold.
    for (let i = 0; i < 8; i++) expect(await usage(payer)).to.equal('300');
    expect(await usage(payer, first)).to.equal('200');
    expect(plans).to.have.length(9);
    for (const plan of plans) {
      expect(plan).to.include('orders_limit_usage');
      expect(plan).not.to.match(/orders_user_id_id|orders_user_idempotency_key|orders_user_created|Seq Scan/);
    }
  });

  it('when it is taken back and run again, then the usage is the same either way', async () => {
    const payer = await newPayer();
    await orders(payer, 2, { kes: 250, ago: '3 hours', spread: '1 hour', checked: true });
    await orders(payer, 5, { kes: 9, ago: '1 minute', checked: false, status: 'pending' });
    expect(await usage(payer)).to.equal('500');

    await createMigrator(db).down({ to: USAGE_INDEX });
    expect(await usage(payer)).to.equal('500');
    expect(plans.at(-1)).not.to.include('orders_limit_usage');

    await createMigrator(db).up();
    expect(await usage(payer)).to.equal('500');
    expect(plans.at(-1)).to.include('orders_limit_usage');
  });
});
