import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { CcxtTransferConnector } from '../connectors/ccxt-transfer';
import { depositMinor } from '../workers/crypto-deposits';
import { startRailFakes } from './fakes/rails';
import { api, blocklist, newUser, walletOf, type TestUser } from './support/api';
import { rows } from './support/db';
import { realRails } from './support/rails';
import { until } from './support/processes';
import { jobsAgainstRailFakes } from './support/rail-jobs';

/**
 * Crypto deposits (docs/wallets.md#crypto-deposits): the exchange account's deposit address through ccxt `fetchDepositAddress`, with
 * the user's deposit reference as the memo, and the jobs process, started from the build with the crypto rail
 * on ccxt (against the local Binance), reading `fetchDeposits` on the `match-crypto-deposits` schedule and
 * crediting each confirmed deposit once per txid.
 */

const usdt = async (user: TestUser) => (await walletOf(user)).data.find((d) => d.currency === 'USDT')?.available;

const depositRows = (txid: string) =>
  rows<{ status: string; rail: string; channel: string; amount_minor: string; user_id: string | null }>(
    `SELECT status, rail, channel, amount_minor::text AS amount_minor, user_id FROM deposits WHERE provider_reference = :txid`,
    { txid },
  );

describe('unit: crypto deposit amounts', () => {
  it('then the exchange’s decimal string becomes minor units exactly, and anything the wallet cannot hold exactly is refused', () => {
    expect(depositMinor('25.5', 6)).to.equal(25_500000n);
    expect(depositMinor('0.00000001', 8)).to.equal(1n);
    expect(depositMinor('10.12345600', 6)).to.equal(10_123456n); // trailing zeros beyond the scale are not digits
    expect(depositMinor('10.1234567', 6)).to.equal(null);
    for (const bad of [null, '', '0', '0.000000', '-1', '1e3', 'abc', '1,000.00']) expect(depositMinor(bad, 6), String(bad)).to.equal(null);
  });
});

describe('crypto deposit addresses', () => {
  describe('when a user asks where to send USDT', () => {
    it('then the answer names an address and network, with their deposit reference as the memo', async () => {
      const user = await newUser({ funded: false });
      const { deposit_reference: reference } = await walletOf(user);
      const res = await api().get('/api/v1/wallets/USDT/deposit-address').set(user.auth);
      expect(res.status, res.text).to.equal(200);
      const body = res.body as { currency: string; address: string; network: string | null; tag: string; instructions: string };
      expect(body).to.include({ currency: 'USDT', tag: reference });
      expect(body.address).to.match(realRails ? /^T[0-9a-f]{33}$/ : /^sandbox-usdt-/);
      expect(body.instructions).to.include(realRails ? reference : '/sandbox/crypto-deposits');
    });
  });

  describe('when the currency is not a crypto asset, or the network is malformed', () => {
    it('then it is a 400 naming the field', async () => {
      const user = await newUser({ funded: false });
      const kes = await api().get('/api/v1/wallets/KES/deposit-address').set(user.auth);
      expect(kes.status, kes.text).to.equal(400);
      expect(kes.text).to.include('currency');
      const network = await api().get('/api/v1/wallets/USDT/deposit-address?network=trc%2020;drop').set(user.auth);
      expect(network.status, network.text).to.equal(400);
      expect(network.text).to.include('network');
      if (realRails) {
        // Only the exchange knows its networks: BTC has none called TRC20.
        const unknown = await api().get('/api/v1/wallets/BTC/deposit-address?network=TRC20').set(user.auth);
        expect(unknown.status, unknown.text).to.equal(400);
        expect(unknown.text).to.include('network');
      }
    });
  });

  describe('when the real connector asks the exchange (local Binance)', () => {
    it('then the address is the one the exchange gave for that network, and the balance is read exactly, through signed requests', async () => {
      const fakes = await startRailFakes();
      try {
        const connector = new CcxtTransferConnector({
          exchange: 'binance',
          apiKey: fakes.env.CCXT_API_KEY,
          secret: fakes.env.CCXT_SECRET,
          sandbox: false,
          apiUrl: fakes.binance.url,
        });
        expect(await connector.depositAddress('USDT', 'TRC20')).to.deep.equal({
          address: fakes.binance.depositAddress('USDT', 'TRX'),
          network: 'TRC20',
          tag: null,
        });
        expect((await connector.depositAddress('USDT', 'ERC20')).address).to.equal(fakes.binance.depositAddress('USDT', 'ETH'));
        const calls = fakes.binance.signed.filter((c) => c.path === '/sapi/v1/capital/deposit/address');
        expect(calls).to.have.length(2);
        expect(calls.every((c) => c.valid)).to.equal(true);

        // The account's balance, as the exchange wrote it (free and locked), for float reconciliation.
        fakes.binance.deposit({ coin: 'USDC', amount: '12.345678' });
        const balances = await connector.exactBalances();
        expect(balances?.get('USDC')).to.deep.equal(['1012.34567800', '0.00000000']);
        const other = new CcxtTransferConnector({
          exchange: 'kraken',
          apiKey: 'k',
          secret: 's',
          sandbox: false,
          apiUrl: fakes.binance.url,
        });
        expect(await other.exactBalances(), 'an exchange whose raw balances are not known').to.equal(null);
      } finally {
        await fakes.close();
      }
    });
  });
});

describe('money in by crypto deposit, read from the exchange account', function () {
  this.timeout(60_000);
  const rail = jobsAgainstRailFakes('crypto-deposits', 'MATCH_CRYPTO_DEPOSITS_EVERY_MS');

  const historyReads = () => rail().fakes.binance.signed.filter((c) => c.path === '/sapi/v1/capital/deposit/hisrec').length;
  const morePolls = async (n: number) => {
    const seen = historyReads();
    await until(`${n} more deposit-history polls`, () => Promise.resolve(historyReads() >= seen + n ? true : undefined), 20_000, 50);
  };

  describe('when a confirmed deposit quoting a deposit reference is seen on two polls', () => {
    it('then it is credited to that wallet once, at the exact amount the exchange wrote', async () => {
      const user = await newUser({ funded: false });
      const { deposit_reference: reference } = await walletOf(user);
      const arrived = rail().fakes.binance.deposit({ coin: 'USDT', amount: '25.123456', tag: reference.toLowerCase(), network: 'TRX' });

      await until('the crypto deposit credited', async () => ((await usdt(user)) === '25.123456' ? true : undefined), 20_000, 100);
      await morePolls(2);
      expect(await usdt(user)).to.equal('25.123456');
      expect(await depositRows(arrived.txId)).to.deep.equal([
        { status: 'completed', rail: 'ccxt', channel: 'crypto', amount_minor: '25123456', user_id: user.id },
      ]);
      const statement = (await api().get('/api/v1/wallets/USDT/transactions').set(user.auth)).body as {
        data: { kind: string; amount: string; balance_after: string }[];
      };
      expect(statement.data[0]).to.include({ amount: '25.123456', balance_after: '25.123456' });
    });
  });

  describe('when a deposit is still pending at the exchange', () => {
    it('then nothing is credited until the exchange confirms it, and then once', async () => {
      const user = await newUser({ funded: false });
      const { deposit_reference: reference } = await walletOf(user);
      const arrived = rail().fakes.binance.deposit({ coin: 'USDT', amount: '7', tag: reference, confirmed: false });
      await morePolls(2);
      expect(await depositRows(arrived.txId)).to.deep.equal([]);
      expect(await usdt(user)).to.equal('0.000000');

      arrived.status = 1;
      await until('the confirmed deposit credited', async () => ((await usdt(user)) === '7.000000' ? true : undefined), 20_000, 100);
      await morePolls(2);
      expect(await depositRows(arrived.txId)).to.have.length(1);
      expect(await usdt(user)).to.equal('7.000000');
    });
  });

  describe('when a deposit quotes no reference anybody has', () => {
    it('then it waits unmatched for staff, once', async () => {
      const arrived = rail().fakes.binance.deposit({ coin: 'USDT', amount: '3.5', tag: `memo-${randomUUID().slice(0, 8)}` });
      const [row] = await until(
        'the unmatched deposit',
        async () => ((await depositRows(arrived.txId)).length ? depositRows(arrived.txId) : undefined),
        20_000,
        100,
      );
      expect(row).to.deep.equal({ status: 'unmatched', rail: 'ccxt', channel: 'crypto', amount_minor: '3500000', user_id: null });
      await morePolls(2);
      expect(await depositRows(arrived.txId)).to.have.length(1);
    });
  });

  describe('when the deposit was sent from a blocklisted address', () => {
    it('then the money waits in compliance suspense with a screening hit, and the wallet is not credited', async () => {
      const admin = await newUser({ roles: ['admin'], funded: false });
      const user = await newUser({ funded: false });
      const { deposit_reference: reference } = await walletOf(user);
      const source = `0x${randomUUID().replace(/-/g, '')}deadbeef`;
      await blocklist(admin, { type: 'crypto_address', value: source, reason: 'crypto deposit screening test' });
      const arrived = rail().fakes.binance.deposit({ coin: 'USDT', amount: '40', tag: reference, sourceAddress: source });
      const [row] = await until(
        'the screened deposit',
        async () => ((await depositRows(arrived.txId)).length ? depositRows(arrived.txId) : undefined),
        20_000,
        100,
      );
      expect(row).to.include({ status: 'held', user_id: user.id });
      expect(await usdt(user)).to.equal('0.000000');
      const hits = await rows<{ field: string }>(
        `SELECT h.field FROM screening_hits h JOIN deposits d ON d.id = h.deposit_id WHERE d.provider_reference = :txid`,
        { txid: arrived.txId },
      );
      expect(hits).to.deep.equal([{ field: 'payer.address' }]);
    });
  });

  describe('when a deposit carries more decimals than the wallet holds', () => {
    it('then nothing is rounded or credited: it is left for staff on the exchange', async () => {
      const user = await newUser({ funded: false });
      const { deposit_reference: reference } = await walletOf(user);
      const arrived = rail().fakes.binance.deposit({ coin: 'USDT', amount: '1.1234567', tag: reference });
      await morePolls(3);
      expect(await depositRows(arrived.txId)).to.deep.equal([]);
      expect(await usdt(user)).to.equal('0.000000');
    });
  });
});
