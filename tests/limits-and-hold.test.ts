import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import { expect } from 'chai';
import { QueryTypes, type Sequelize } from 'sequelize';
import type { Connectors } from '../connectors';
import { ledgerAccountsOf } from '../domain/orders';
import { createMigrator } from '../models/migrator';
import { config } from '../platform/config';
import { database } from '../platform/database';
import { findOrder } from '../repositories/orders';
import { createActivities } from '../workflows/activities';
import { ORDER_NOT_FOUND } from '../workflows/failure-types';
import { newUser } from './support/api';
import { fundWallets } from './support/funding';
import { ledgerKindsOf, rows } from './support/db';
import { ownDatabase } from './support/own-database';

/** A payment's KYC limits check and hold, as its admission runs them: one statement under the order's and payer's locks. */
describe('the limits check and the hold in one statement', () => {
  const activities = createActivities({ connectors: {} as Connectors, config: config() });

  /** An order of `kesMinor` (KES) waiting for its hold, or one that already counts towards the 24-hour usage. */
  async function order(userId: string, kesMinor: bigint, counted = false): Promise<string> {
    const id = randomUUID();
    await database().query(
      `INSERT INTO orders (id, user_id, idempotency_key, amount_minor, kes_equivalent_minor, currency, method, destination,
                           status, workflow_id, limits_checked_at, created_at, updated_at)
       VALUES (:id, :userId, :id, :kes, :kes, 'KES', 'mobile_money', '{"phone":"+254712345678"}'::jsonb, :status,
               'payment-' || :id, :checked, now(), now())`,
      {
        replacements: {
          id,
          userId,
          kes: kesMinor.toString(),
          status: counted ? 'processing' : 'screening',
          checked: counted ? new Date() : null,
        },
      },
    );
    return id;
  }

  const hold = async (orderId: string) => activities.limitAndHold({ orderId });
  const stateOf = async (orderId: string) => {
    const [row] = await rows<{ status: string; failure_code: string | null; checked: boolean; events: string[] }>(
      `SELECT o.status, o.failure_code, o.limits_checked_at IS NOT NULL AS checked,
              array(SELECT e.status || ':' || coalesce(e.detail, '') FROM order_events e WHERE e.order_id = o.id ORDER BY e.id) AS events
         FROM orders o WHERE o.id = :orderId`,
      { orderId },
    );
    return row;
  };

  describe('when the payer is within the tier limits and the wallet covers the amount', () => {
    it('then the amount is held once, the order is processing with one event, and running it again changes nothing', async () => {
      const user = await newUser();
      const orderId = await order(user.id, 2_500_00n);
      const first = await hold(orderId);
      const again = await hold(orderId);
      const accounts = ledgerAccountsOf((await findOrder(orderId))!);
      expect(first).to.deep.equal({ outcome: 'held', accounts });
      expect(again).to.deep.equal({ outcome: 'held', accounts });
      expect(await stateOf(orderId)).to.deep.equal({
        status: 'processing',
        failure_code: null,
        checked: true,
        events: ['processing:funds held'],
      });
      expect(await ledgerKindsOf(orderId)).to.deep.equal(['hold']);
    });
  });

  describe('when the payment would take an unverified payer past the 24-hour limit', () => {
    it('then the order is rejected with kyc_required, naming the daily limit, and nothing is held', async () => {
      const user = await newUser();
      await order(user.id, 45_000_00n, true);
      const orderId = await order(user.id, 6_000_00n);
      expect(await hold(orderId)).to.deep.equal({ outcome: 'rejected', failureCode: 'kyc_required' });
      const state = await stateOf(orderId);
      expect(state).to.include({ status: 'rejected', failure_code: 'kyc_required', checked: false });
      expect(state.events).to.deep.equal(['rejected:kyc_required: the unverified tier allows at most KES 50000 per 24 hours']);
      expect(await ledgerKindsOf(orderId)).to.deep.equal([]);
    });
  });

  describe('when one payment is over the verified tier per-payment limit', () => {
    it('then it is rejected with limit_exceeded, whatever the usage', async () => {
      const user = await newUser({ kycStatus: 'verified' });
      const orderId = await order(user.id, 1_000_000_01n);
      expect(await hold(orderId)).to.deep.equal({ outcome: 'rejected', failureCode: 'limit_exceeded' });
      expect((await stateOf(orderId)).status).to.equal('rejected');
    });
  });

  describe('when the wallet cannot cover the hold', () => {
    it('then it answers unheld and leaves the order as it was: no posting, no status, not counted towards the limits', async () => {
      const user = await newUser({ funded: false });
      await fundWallets(user.id, { KES: 100_00n });
      const orderId = await order(user.id, 1_000_00n);
      expect(await hold(orderId)).to.deep.include({ outcome: 'unheld', failureCode: 'insufficient_funds' });
      expect(await stateOf(orderId)).to.deep.equal({ status: 'screening', failure_code: null, checked: false, events: [] });
      expect(await ledgerKindsOf(orderId)).to.deep.equal([]);
    });
  });

  describe('when payments of one payer race for the last of the daily limit', () => {
    it('then they take the check in turn: exactly as many are held as fit, the others are rejected', async () => {
      const user = await newUser();
      await order(user.id, 30_000_00n, true);
      const racing = await Promise.all(Array.from({ length: 4 }, () => order(user.id, 10_000_00n)));
      const outcomes = await Promise.all(racing.map((orderId) => hold(orderId)));
      expect(outcomes.filter((o) => o.outcome === 'held')).to.have.length(2);
      expect(outcomes.filter((o) => o.outcome === 'rejected')).to.have.length(2);
      const [usage] = await rows<{ used: string }>('SELECT order_limit_usage(:userId, NULL)::text AS used', { userId: user.id });
      expect(usage.used).to.equal('5000000');
    });
  });

  describe('when the order does not exist', () => {
    it('then it fails for good as order not found', async () => {
      const failure = await hold(randomUUID()).catch((err: unknown) => err);
      expect(failure).to.be.instanceOf(ApplicationFailure);
      expect((failure as ApplicationFailure).type).to.equal(ORDER_NOT_FOUND);
    });
  });
});

describe('the limits-and-hold migration taken back', () => {
  const MIGRATION = '202611300100-payment-limits-and-hold';
  const own = ownDatabase('limits_and_hold');
  let db: Sequelize;
  const functions = async () =>
    (
      await db.query<{ proname: string }>(
        `SELECT proname FROM pg_proc WHERE proname IN ('order_limit_usage', 'payment_limits_and_hold') ORDER BY proname`,
        { type: QueryTypes.SELECT },
      )
    ).map((r) => r.proname);

  before(async function () {
    this.timeout(90_000);
    db = await own.open(MIGRATION);
  });

  after(async () => {
    await own.close(db);
  });

  it('when it is applied, taken back and applied again, then both functions come and go with it', async () => {
    expect(await functions()).to.deep.equal(['order_limit_usage', 'payment_limits_and_hold']);
    await createMigrator(db).down({ to: MIGRATION });
    expect(await functions()).to.deep.equal([]);
    await createMigrator(db).up();
    expect(await createMigrator(db).pending()).to.deep.equal([]);
    expect(await functions()).to.deep.equal(['order_limit_usage', 'payment_limits_and_hold']);
  });
});
