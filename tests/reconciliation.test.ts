import { expect } from 'chai';
import { api, newUser } from './support/api';
import { exactMinor } from '../domain/money';
import { expectedRails, realRails } from './support/rails';
import { currentRailFakes } from './support/stack';
import { until } from './support/wait';

/** Float reconciliation (docs/wallets.md#float-reconciliation): customer liabilities and fee revenue against what the rails hold. */

interface RailLine {
  method: string;
  connector: string | null;
  ledger: string;
  reported: string | null;
  difference: string | null;
  note?: string;
}

interface Reconciliation {
  generated_at: string;
  data: {
    currency: string;
    liabilities: { wallets: string; holds: string; escrows: string; suspense: string; total: string };
    fee_revenue: string;
    expenses: string;
    other: string;
    rails_per_ledger: string;
    ledger_difference: string;
    rails: RailLine[];
  }[];
}

const minor = (decimal: string): bigint => BigInt(decimal.replace('.', ''));

describe('float reconciliation', () => {
  describe('when a compliance officer asks for it', () => {
    it('then, per currency, what the ledger says the rails hold equals liabilities plus fee revenue', async () => {
      await newUser(); // funded: at least KES and the assets hold money
      const officer = await newUser({ roles: ['compliance'], funded: false });
      const res = await api().get('/api/v1/compliance/reconciliation').set(officer.auth);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const body = res.body as Reconciliation;
      const kes = body.data.find((d) => d.currency === 'KES');
      expect(kes, 'KES is reconciled').to.not.equal(undefined);
      for (const c of body.data) {
        const l = c.liabilities;
        expect(minor(l.total), c.currency).to.equal(minor(l.wallets) + minor(l.holds) + minor(l.escrows) + minor(l.suspense));
        // Refunds are paid by the operator (expense:refunds), not given back by a rail.
        expect(minor(c.rails_per_ledger), c.currency).to.equal(minor(l.total) + minor(c.fee_revenue) - minor(c.expenses));
        expect(minor(c.ledger_difference), c.currency).to.equal(0n);
        expect(minor(c.other), c.currency).to.equal(0n);
        for (const rail of c.rails) {
          if (rail.reported !== null)
            expect(minor(rail.difference ?? 'x'), `${c.currency} ${rail.method}`).to.equal(minor(rail.reported) - minor(rail.ledger));
        }
      }
    });

    it("then each rail that can report its balance does, through the rail's own connector", async () => {
      const officer = await newUser({ roles: ['compliance'], funded: false });
      const body = (await api().get('/api/v1/compliance/reconciliation').set(officer.auth)).body as Reconciliation;
      const kesBank = body.data.find((d) => d.currency === 'KES')?.rails.find((r) => r.method === 'bank_transfer');
      expect(kesBank?.connector).to.equal(expectedRails.bank_transfer);
      if (realRails) {
        // The primary bank's own current balance (from the bank's books), as the Jenga account-balance API answers it.
        expect(kesBank?.reported).to.equal(currentRailFakes()?.jenga.balance());
        // M-Pesa's balance comes from Daraja's Account Balance query, answered later at our URL: each
        // reconciliation asks, and reports the latest answer, which is the fake's own books.
        const daraja = currentRailFakes()?.daraja;
        const mpesa = await until(
          "M-Pesa's AccountBalance answered",
          async () => {
            const again = (await api().get('/api/v1/compliance/reconciliation').set(officer.auth)).body as Reconciliation;
            const line = again.data.find((d) => d.currency === 'KES')?.rails.find((r) => r.method === 'mobile_money');
            return line?.reported === daraja?.balance() ? line : undefined;
          },
          10_000,
          200,
        );
        expect(mpesa).to.include({ connector: 'daraja', reported: daraja?.balance() });
        expect(mpesa.note).to.match(/AccountBalance as answered at \d{4}-/);
        expect(daraja?.calls.some((c) => c.path === '/mpesa/accountbalance/v1/query' && c.body.CommandID === 'AccountBalance')).to.equal(
          true,
        );
        // The exchange account's own balance, from the raw answer to ccxt fetchBalance (never its floats).
        const binance = currentRailFakes()?.binance;
        const before = binance?.accountBalance('USDT');
        const usdt = (await api().get('/api/v1/compliance/reconciliation').set(officer.auth)).body as Reconciliation;
        const after = binance?.accountBalance('USDT');
        const crypto = usdt.data.find((d) => d.currency === 'USDT')?.rails.find((r) => r.method === 'crypto');
        expect(crypto?.connector).to.equal('ccxt');
        expect(crypto?.reported, JSON.stringify(crypto)).to.be.a('string');
        expect([before, after].map((b) => exactMinor(b, 6))).to.include(minor(crypto?.reported ?? ''));
      } else {
        // The sandbox keeps its own books: what it took in less what it paid out.
        expect(kesBank?.reported).to.match(/^-?\d+\.\d{2}$/);
      }
    });
  });

  describe('when someone other than staff asks', () => {
    it('then a customer is refused with 403 and an anonymous caller with 401', async () => {
      const customer = await newUser({ funded: false });
      expect((await api().get('/api/v1/compliance/reconciliation').set(customer.auth)).status).to.equal(403);
      expect((await api().get('/api/v1/compliance/reconciliation')).status).to.equal(401);
    });
  });
});
