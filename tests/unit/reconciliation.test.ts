import { expect } from 'chai';
import { accountClassOf, reconcile, type ClassBalance } from '../../domain/reconciliation';

const line = (currency: string, account: string, balance_minor: string): ClassBalance => ({ currency, account, balance_minor });

describe('unit: float reconciliation', () => {
  describe('when accounts are classified', () => {
    it('then wallets, holds, escrows, suspense, fees and rails are told apart by name, and anything else is other', () => {
      expect(accountClassOf('wallet:u:KES')).to.equal('wallets');
      expect(accountClassOf('hold:o')).to.equal('holds');
      expect(accountClassOf('escrow:a')).to.equal('escrows');
      expect(accountClassOf('suspense:compliance')).to.equal('suspense');
      expect(accountClassOf('revenue:fees')).to.equal('fees');
      expect(accountClassOf('rail:mobile_money')).to.equal('rail');
      expect(accountClassOf('user:legacy')).to.equal('other');
    });
  });

  describe('when deposits came in and a payout left', () => {
    const balances = [
      line('KES', 'wallet:', '150000'),
      line('KES', 'hold:', '20000'),
      line('KES', 'revenue:fees', '500'),
      // Rail accounts are assets: 2,000 came in by M-Pesa (debit), 295 left by bank transfer (credit).
      line('KES', 'rail:mobile_money', '-200000'),
      line('KES', 'rail:bank_transfer', '29500'),
    ];

    it('then what the ledger says the rails hold equals liabilities plus fee revenue', () => {
      const [kes] = reconcile(balances, []);
      expect(kes.currency).to.equal('KES');
      expect(kes.liabilities).to.deep.equal({ wallets: '1500.00', holds: '200.00', escrows: '0.00', suspense: '0.00', total: '1700.00' });
      expect(kes.fee_revenue).to.equal('5.00');
      expect(kes.rails_per_ledger).to.equal('1705.00');
      expect(kes.ledger_difference).to.equal('0.00');
      expect(kes.other).to.equal('0.00');
      expect(kes.rails.map((r) => [r.method, r.ledger, r.reported])).to.deep.equal([
        ['bank_transfer', '-295.00', null],
        ['mobile_money', '2000.00', null],
      ]);
    });

    it("then a rail's own report is set beside its account, with the difference", () => {
      const [kes] = reconcile(balances, [{ method: 'mobile_money', connector: 'sandbox', currency: 'KES', reported_minor: '199000' }]);
      const mpesa = kes.rails.find((r) => r.method === 'mobile_money');
      expect(mpesa).to.include({ connector: 'sandbox', ledger: '2000.00', reported: '1990.00', difference: '-10.00' });
    });
  });

  describe('when an account outside the known classes holds money', () => {
    it('then it shows as other and the rails no longer match liabilities plus fees alone', () => {
      const [kes] = reconcile([line('KES', 'wallet:', '1000'), line('KES', 'other', '-1000')], []);
      expect(kes.other).to.equal('-10.00');
      expect(kes.rails_per_ledger).to.equal('0.00');
      expect(kes.ledger_difference).to.equal('0.00');
    });
  });

  describe('when the operator paid a refund from expense:refunds', () => {
    it('then it shows as expenses, the rails are liabilities plus fees less expenses, and nothing is left unexplained', () => {
      // KES 2,000 came in by M-Pesa and 1,500 left by bank transfer; 1,500 was refunded to the wallet by the operator.
      const [kes] = reconcile(
        [
          line('KES', 'wallet:', '200000'),
          line('KES', 'expense:', '-150000'),
          line('KES', 'rail:mobile_money', '-200000'),
          line('KES', 'rail:bank_transfer', '150000'),
        ],
        [],
      );
      expect(accountClassOf('expense:refunds')).to.equal('expenses');
      expect(kes.expenses).to.equal('1500.00');
      expect(kes.rails_per_ledger).to.equal('500.00');
      expect(kes.other).to.equal('0.00');
      expect(kes.ledger_difference).to.equal('0.00');
    });
  });

  describe('when the ledger itself does not balance', () => {
    it('then the difference says by how much', () => {
      const [usdt] = reconcile([line('USDT', 'wallet:', '5000000'), line('USDT', 'rail:crypto', '-4000000')], []);
      expect(usdt.rails_per_ledger).to.equal('4.000000');
      expect(usdt.ledger_difference).to.equal('-1.000000');
    });
  });

  describe('when a currency has no balances and no reports', () => {
    it('then it is left out', () => {
      expect(reconcile([], [])).to.deep.equal([]);
    });
  });
});
