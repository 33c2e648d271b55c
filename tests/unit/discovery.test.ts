import { expect } from 'chai';
import { loadConfig } from '../../platform/config';
import { kenyanBankRegistry } from '../../domain/discovery/bank-registry';
import { probeExchanges, UNREACHABLE_STREAK, type StatusCheck } from '../../connectors/exchange-probe';
import { entryFromDescription, normaliseCountry, sandboxExchanges, type ExchangeEntry } from '../../connectors/exchanges';
import { bankRoute, PESALINK_MAX_KES_MINOR, routesInto } from '../../domain/discovery/routing';

const entry = (id: string, probeWith: ExchangeEntry['probeWith'] = 'fetchStatus'): ExchangeEntry => ({
  id,
  name: id,
  countries: [],
  urls: { www: null, doc: [], api: [], fees: [], logo: null },
  capabilities: [],
  fees: { maker: null, taker: null, percentage: null, tier_based: null },
  certified: false,
  pro: false,
  source: 'ccxt',
  probeWith,
});

const never = () => new Promise<never>(() => undefined);

describe('unit: discovery', () => {
  describe('when a bank transfer is routed', () => {
    const route = (destinationBankCode: string, pesalink: boolean, amountMinor: bigint, currency = 'KES') =>
      bankRoute({ destinationBankCode, primaryBankCode: '68', destinationOnPesalink: pesalink, currency, amountMinor });

    it('then the primary bank itself is internal, whatever the amount or currency', () => {
      expect(route('68', true, 10n ** 12n)).to.equal('internal');
      expect(route('68', true, 100n, 'USD')).to.equal('internal');
    });

    it('then a PesaLink bank takes PesaLink up to KES 999,999.00 inclusive, RTGS above', () => {
      expect(route('01', true, PESALINK_MAX_KES_MINOR)).to.equal('pesalink');
      expect(route('01', true, PESALINK_MAX_KES_MINOR + 1n)).to.equal('rtgs');
    });

    it('then a bank outside PesaLink, or another currency, goes by RTGS', () => {
      expect(route('05', false, 100n)).to.equal('rtgs');
      expect(route('01', true, 100n, 'USD')).to.equal('rtgs');
    });

    it('then the directory lists the routes into each bank', () => {
      expect(routesInto('68', '68', true)).to.deep.equal(['internal']);
      expect(routesInto('01', '68', true)).to.deep.equal(['pesalink', 'rtgs']);
      expect(routesInto('05', '68', false)).to.deep.equal(['rtgs']);
    });
  });

  describe('when the bank registry is read', () => {
    it('then it is valid, unique by code, and holds Equity (68), KCB (01) and at least 35 others', () => {
      const banks = kenyanBankRegistry();
      expect(new Set(banks.map((b) => b.code)).size).to.equal(banks.length);
      expect(banks.length).to.be.at.least(36);
      expect(banks.find((b) => b.code === '68')).to.deep.include({ name: 'Equity Bank Kenya', swift_bic: 'EQBLKENA', pesalink: true });
      expect(banks.find((b) => b.code === '01')).to.deep.include({ name: 'KCB Bank Kenya', swift_bic: 'KCBLKENX', pesalink: true });
      for (const bank of banks) {
        expect(bank.source, bank.code).to.not.be.empty;
        expect(bank.verified_on, bank.code).to.match(/^\d{4}-\d{2}-\d{2}$/);
      }
    });
  });

  describe('when ccxt metadata is read', () => {
    it('then capabilities are the supported `has` names, sorted, and the probe method follows from them', () => {
      const e = entryFromDescription({
        id: 'demo',
        name: 'Demo',
        countries: ['UK', 'pt-BR', 'US', 'US', 'nonsense'],
        urls: { www: 'https://demo.example', doc: ['https://docs.demo.example'], api: { public: 'https://api.demo.example' }, logo: 'x' },
        has: { withdraw: true, fetchTime: true, fetchStatus: false, fetchOHLCV: 'emulated', createOrder: undefined },
        fees: { trading: { maker: 0.001, taker: 0.002, percentage: true, tierBased: false } },
        certified: true,
      });
      expect(e.countries).to.deep.equal(['BR', 'GB', 'US']);
      expect(e.capabilities).to.deep.equal(['fetchTime', 'withdraw']);
      expect(e.probeWith).to.equal('fetchTime');
      expect(e.urls).to.deep.equal({
        www: 'https://demo.example',
        doc: ['https://docs.demo.example'],
        api: ['https://api.demo.example'],
        fees: [],
        logo: null,
      });
      expect(e.fees).to.deep.equal({ maker: 0.001, taker: 0.002, percentage: true, tier_based: false });
      expect(e).to.deep.include({ certified: true, pro: false, source: 'ccxt' });
    });

    it('then country codes are ISO: UK is GB, a locale gives its region, anything else is dropped', () => {
      expect(normaliseCountry('UK')).to.equal('GB');
      expect(normaliseCountry('ke')).to.equal('KE');
      expect(normaliseCountry('pt-BR')).to.equal('BR');
      expect(normaliseCountry('Kenya')).to.equal(null);
    });

    it('then the sandbox exchange is always in maintenance and never probed', () => {
      expect(sandboxExchanges().map((e) => [e.id, e.fixedStatus, e.probeWith])).to.deep.equal([
        ['sandbox_maintenance', 'maintenance', null],
      ]);
    });
  });

  describe('when exchanges are probed', () => {
    it('then each answer is kept with when it was asked, and exchanges with no way to ask are skipped', async () => {
      const check: StatusCheck = (e) => Promise.resolve(e.id === 'b' ? 'maintenance' : 'ok');
      const results = await probeExchanges([entry('a'), entry('b', 'fetchTime'), entry('c', null), ...sandboxExchanges()], check, {
        timeoutMs: 1000,
        totalMs: 5000,
        concurrency: 4,
      });
      expect([...results.keys()].sort()).to.deep.equal(['a', 'b']);
      expect(results.get('a')?.status).to.equal('ok');
      expect(results.get('b')?.status).to.equal('maintenance');
      expect(results.get('a')?.checkedAt).to.be.instanceOf(Date);
    });

    it('then an exchange that does not answer in time, or fails, is unknown', async () => {
      const check: StatusCheck = (e) =>
        e.id === 'slow' ? never() : e.id === 'broken' ? Promise.reject(new Error('down')) : Promise.resolve('ok');
      const started = Date.now();
      const results = await probeExchanges([entry('slow'), entry('broken'), entry('fine')], check, {
        timeoutMs: 100,
        totalMs: 5000,
        concurrency: 3,
      });
      expect(Date.now() - started).to.be.lessThan(1000);
      expect(results.get('slow')).to.deep.include({ status: 'unknown' });
      expect(results.get('slow')?.checkedAt).to.be.instanceOf(Date);
      expect(results.get('broken')?.status).to.equal('unknown');
      expect(results.get('fine')?.status).to.equal('ok');
    });

    it('then no more than `concurrency` checks run at once', async () => {
      let running = 0;
      let most = 0;
      const check: StatusCheck = async () => {
        running += 1;
        most = Math.max(most, running);
        await new Promise((r) => setTimeout(r, 5));
        running -= 1;
        return 'ok';
      };
      await probeExchanges(
        Array.from({ length: 30 }, (_, i) => entry(`e${i}`)),
        check,
        { timeoutMs: 1000, totalMs: 5000, concurrency: 4 },
      );
      expect(most).to.equal(4);
    });

    it('then the whole probe ends by its deadline even if every exchange hangs, the rest left unasked', async () => {
      const started = Date.now();
      const results = await probeExchanges(
        Array.from({ length: 20 }, (_, i) => entry(`e${i}`)),
        never,
        { timeoutMs: 10_000, totalMs: 150, concurrency: 2 },
      );
      expect(Date.now() - started).to.be.lessThan(1000);
      expect(results.size).to.equal(20);
      expect([...results.values()].every((r) => r.status === 'unknown')).to.equal(true);
      expect([...results.values()].filter((r) => r.checkedAt === null)).to.have.length(18);
    });

    it('then it stops asking once a run of exchanges in a row cannot be reached (no network)', async () => {
      let asked = 0;
      const check: StatusCheck = () => {
        asked += 1;
        return Promise.reject(new Error('getaddrinfo ENOTFOUND'));
      };
      const results = await probeExchanges(
        Array.from({ length: 60 }, (_, i) => entry(`e${i}`)),
        check,
        { timeoutMs: 1000, totalMs: 5000, concurrency: 1 },
      );
      expect(asked).to.equal(UNREACHABLE_STREAK);
      expect(results.size).to.equal(60);
      expect([...results.values()].every((r) => r.status === 'unknown')).to.equal(true);
    });
  });

  describe('when the discovery settings are read', () => {
    it('then they default to Equity as primary, a 15-minute and a daily refresh, and a bounded probe', () => {
      expect(loadConfig({}).discovery).to.deep.equal({
        primaryBankCode: '68',
        refreshExchangesEveryMs: 15 * 60 * 1000,
        refreshBanksEveryMs: 24 * 60 * 60 * 1000,
        probe: { enabled: true, timeoutMs: 3000, totalMs: 15_000, concurrency: 8 },
        jobs: { attempts: 5, backoffMs: 10_000, lockMs: 30_000 },
      });
    });

    it('then a bad primary bank code or probe switch stops the process naming it', () => {
      expect(() => loadConfig({ PRIMARY_BANK_CODE: 'equity' })).to.throw(/PRIMARY_BANK_CODE/);
      expect(() => loadConfig({ EXCHANGE_PROBE_ENABLED: 'sometimes' })).to.throw(/EXCHANGE_PROBE_ENABLED/);
      expect(() => loadConfig({ EXCHANGE_PROBE_CONCURRENCY: '0' })).to.throw(/EXCHANGE_PROBE_CONCURRENCY/);
    });
  });
});
