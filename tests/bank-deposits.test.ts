import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { kesAvailable as kes, newUser, walletOf } from './support/api';
import { rows } from './support/db';
import { until } from './support/processes';
import { jobsAgainstRailFakes } from './support/rail-jobs';

/**
 * Bank transfers into the primary bank (docs/wallets.md#bank-transfers): the jobs process, started from the build with the bank on
 * Jenga (against the local Jenga), reads the account statement on the `match-bank-deposits` schedule and
 * credits each credit line once, to the user whose deposit reference its narrative quotes.
 */

describe('money in by bank transfer, matched from the primary bank statement', function () {
  this.timeout(60_000);
  const rail = jobsAgainstRailFakes('bank-deposits', 'MATCH_BANK_DEPOSITS_EVERY_MS');

  const statementReads = () => rail().fakes.jenga.calls.filter((c) => c.path.includes('/miniStatement/')).length;

  describe('when a transfer quoting a deposit reference lands on the account', () => {
    it('then it is credited to that wallet, and the same line seen on later polls is credited once', async () => {
      const user = await newUser({ funded: false });
      const { deposit_reference: reference } = await walletOf(user);
      const bankReference = `FT${randomUUID().replace(/-/g, '').slice(0, 12).toUpperCase()}`;
      // As people write narratives: lower case, a dash, other words around it.
      const typed = `${reference.slice(0, 6)}-${reference.slice(6)}`.toLowerCase();
      rail().fakes.jenga.credit({ reference: bankReference, amount: '3,000.00', description: `pesalink from jane ${typed}` });

      await until('the bank deposit credited', async () => ((await kes(user)) === '3000.00' ? true : undefined), 20_000, 100);
      const seen = statementReads();
      await until('two more statement polls', () => Promise.resolve(statementReads() >= seen + 2 ? true : undefined), 20_000, 50);
      expect(await kes(user)).to.equal('3000.00');
      const deposits = await rows<{ provider_reference: string; channel: string; rail: string; status: string }>(
        `SELECT provider_reference, channel, rail, status FROM deposits WHERE user_id = :id`,
        { id: user.id },
      );
      expect(deposits).to.deep.equal([{ provider_reference: bankReference, channel: 'bank_transfer', rail: 'jenga', status: 'completed' }]);
    });
  });

  describe('when a transfer quotes no reference anybody has', () => {
    it('then it waits unmatched for staff, once', async () => {
      const bankReference = `FT${randomUUID().replace(/-/g, '').slice(0, 12).toUpperCase()}`;
      rail().fakes.jenga.credit({ reference: bankReference, amount: '120.50', description: 'school fees term 3' });
      const row = await until(
        'the unmatched credit',
        async () =>
          (
            await rows<{ status: string; amount_minor: string }>(
              `SELECT status, amount_minor::text AS amount_minor FROM deposits WHERE provider_reference = :ref`,
              { ref: bankReference },
            )
          )[0],
        20_000,
        100,
      );
      expect(row).to.deep.equal({ status: 'unmatched', amount_minor: '12050' });
    });
  });
});
