import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { creditIncoming } from '../services/money-in';
import { api, newUser, uniqueKenyanPhone, type TestUser } from './support/api';
import { withEnv } from './support/config-env';
import { rows } from './support/db';

/** KYC tier caps on wallets (docs/wallets.md#caps-by-kyc-tier): deposits never take a wallet past what its owner's tier allows. */

const bankCredit = (userId: string, amountMinor: bigint) =>
  creditIncoming({
    channel: 'bank_transfer',
    rail: 'sandbox',
    providerReference: `CAP-${randomUUID()}`,
    currency: 'KES',
    amountMinor,
    userId,
    payer: {},
  });

async function kesAvailable(user: TestUser): Promise<string | undefined> {
  const res = await api().get('/api/v1/wallets').set(user.auth);
  expect(res.status).to.equal(200);
  return (res.body as { data: { currency: string; available: string }[] }).data.find((d) => d.currency === 'KES')?.available;
}

describe('wallet caps by KYC tier', () => {
  let restore: () => void;

  beforeEach(() => {
    restore = withEnv({ LIMIT_UNVERIFIED_BALANCE_KES: '50000', LIMIT_VERIFIED_BALANCE_KES: '200000' });
  });
  afterEach(() => restore());

  describe("when a credit would take an unverified user's wallet past KES 50,000", () => {
    it('then the money waits in suspense as a held deposit (kyc_required), and the wallet keeps what it had', async () => {
      const user = await newUser({ funded: false });
      const first = await bankCredit(user.id, 40_000_00n);
      expect(first.deposit.status).to.equal('completed');
      const over = await bankCredit(user.id, 10_000_01n);
      expect(over.deposit).to.include({ status: 'held', failure_code: 'kyc_required' });
      expect(over.deposit.failure_reason).to.match(/at most KES 50000/);
      expect(await kesAvailable(user)).to.equal('40000.00');
      const [posting] = await rows<{ kind: string; account: string }>(
        `SELECT t.kind, e.account FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
          WHERE t.deposit_id = :id AND e.direction = 'credit'`,
        { id: over.deposit.deposit_id },
      );
      expect(posting).to.deep.equal({ kind: 'deposit_held', account: 'suspense:limits' });
      // Exactly up to the cap still fits.
      expect((await bankCredit(user.id, 10_000_00n)).deposit.status).to.equal('completed');
      expect(await kesAvailable(user)).to.equal('50000.00');
    });
  });

  describe('when ten credits race into one empty wallet that can take five of them', () => {
    it('then exactly five are credited, five are held, and the wallet ends at the cap', async () => {
      const user = await newUser({ funded: false });
      const results = await Promise.all(Array.from({ length: 10 }, () => bankCredit(user.id, 10_000_00n)));
      const statuses = results.map((r) => r.deposit.status).sort();
      expect(statuses).to.deep.equal([...Array<string>(5).fill('completed'), ...Array<string>(5).fill('held')]);
      expect(await kesAvailable(user)).to.equal('50000.00');
    });
  });

  describe('when a user asks for an STK Push deposit that would pass their cap', () => {
    const ask = (user: TestUser, amount: string) =>
      api()
        .post('/api/v1/wallets/deposits')
        .set(user.auth)
        .set('Idempotency-Key', randomUUID())
        .send({ amount, currency: 'KES', method: 'mobile_money', phone: uniqueKenyanPhone() });

    it('then an unverified user is refused with 422 kyc_required before the phone is asked', async () => {
      const user = await newUser({ funded: false });
      await bankCredit(user.id, 49_000_00n);
      const res = await ask(user, '2000.00');
      expect(res.status, JSON.stringify(res.body)).to.equal(422);
      expect(res.body).to.include({ code: 'kyc_required' });
      expect(await rows('SELECT 1 FROM deposits WHERE user_id = :id AND channel = :c', { id: user.id, c: 'mpesa_stk' })).to.have.length(0);
    });

    it('then a verified user is held to the higher cap: the same deposit is accepted, one past it is limit_exceeded', async () => {
      const user = await newUser({ funded: false, kycStatus: 'verified' });
      await bankCredit(user.id, 49_000_00n);
      expect((await ask(user, '2000.00')).status).to.equal(202);
      const res = await ask(user, '150000.00');
      expect(res.status, JSON.stringify(res.body)).to.equal(422);
      expect(res.body).to.include({ code: 'limit_exceeded' });
    });
  });
});
