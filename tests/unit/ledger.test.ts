import { expect } from 'chai';
import { LEDGER_KINDS, paymentLines, type LedgerKind, type LedgerLine, type PaymentAccounts } from '../../domain/ledger';

const payment: PaymentAccounts = {
  orderId: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
  userId: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c',
  method: 'mobile_money',
  currency: 'KES',
  amountMinor: '150000',
};

const sum = (lines: LedgerLine[], direction: 'debit' | 'credit') =>
  lines.filter((l) => l.direction === direction).reduce((total, l) => total + BigInt(l.amountMinor), 0n);

/** Net effect per account (credits positive) of a sequence of postings. */
function balances(kinds: LedgerKind[]): Record<string, bigint> {
  const out: Record<string, bigint> = {};
  for (const line of kinds.flatMap((k) => paymentLines(k, payment))) {
    out[line.account] = (out[line.account] ?? 0n) + (line.direction === 'credit' ? 1n : -1n) * BigInt(line.amountMinor);
  }
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== 0n));
}

describe('unit: ledger lines', () => {
  describe('when any kind of posting is made', () => {
    for (const kind of LEDGER_KINDS) {
      it(`then ${kind} is balanced, positive and between two different accounts`, () => {
        const lines = paymentLines(kind, payment);
        expect(lines.length).to.be.at.least(2);
        expect(sum(lines, 'debit')).to.equal(sum(lines, 'credit'));
        expect(sum(lines, 'debit')).to.equal(150000n);
        for (const line of lines) expect(BigInt(line.amountMinor) > 0n).to.equal(true);
        expect(new Set(lines.map((l) => l.account)).size).to.equal(lines.length);
      });
    }
  });

  describe('when each kind is posted', () => {
    it('then the accounts move as documented', () => {
      const user = `wallet:${payment.userId}:${payment.currency}`;
      const hold = `hold:${payment.orderId}`;
      const rail = 'rail:mobile_money';
      expect(balances(['hold'])).to.deep.equal({ [user]: -150000n, [hold]: 150000n });
      expect(balances(['hold', 'release'])).to.deep.equal({});
      expect(balances(['hold', 'settle'])).to.deep.equal({ [user]: -150000n, [rail]: 150000n });
      expect(balances(['hold', 'settle', 'reverse'])).to.deep.equal({});
    });
  });

  describe('when the payment has a fee', () => {
    const withFee: PaymentAccounts = { ...payment, feeMinor: '4500' };
    const net = (kinds: LedgerKind[]) => {
      const out: Record<string, bigint> = {};
      for (const line of kinds.flatMap((k) => paymentLines(k, withFee))) {
        out[line.account] = (out[line.account] ?? 0n) + (line.direction === 'credit' ? 1n : -1n) * BigInt(line.amountMinor);
      }
      return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== 0n));
    };
    for (const kind of LEDGER_KINDS) {
      it(`then ${kind} is balanced, positive and touches each account once`, () => {
        const lines = paymentLines(kind, withFee);
        expect(sum(lines, 'debit')).to.equal(sum(lines, 'credit'));
        expect(sum(lines, 'debit')).to.equal(154500n);
        for (const line of lines) expect(BigInt(line.amountMinor) > 0n).to.equal(true);
        expect(new Set(lines.map((l) => l.account)).size).to.equal(lines.length);
      });
    }
    it('then the hold takes amount and fee, settlement splits them between the rail and fee revenue, and a reversal mirrors it', () => {
      const user = `wallet:${payment.userId}:${payment.currency}`;
      const hold = `hold:${payment.orderId}`;
      expect(net(['hold'])).to.deep.equal({ [user]: -154500n, [hold]: 154500n });
      expect(net(['hold', 'release'])).to.deep.equal({});
      expect(net(['hold', 'settle'])).to.deep.equal({ [user]: -154500n, 'rail:mobile_money': 150000n, 'revenue:fees': 4500n });
      expect(net(['hold', 'settle', 'reverse'])).to.deep.equal({});
    });
  });
});
