import { expect } from 'chai';
import { kenyanBankRegistry } from '../domain/discovery/bank-registry';
import { discoverExchanges } from '../connectors/exchanges';
import { refreshBanks, refreshExchanges } from '../workers/catalogue-refresh';
import { api } from './support/api';
import { rows } from './support/db';

interface ExchangeItem {
  id: string;
  name: string;
  countries: string[];
  capabilities: string[];
  certified: boolean;
  pro: boolean;
  source: string;
  status: string;
  checked_at: string | null;
  urls: { www: string | null; doc: string[]; api: string[] };
  fees: { maker: number | null; taker: number | null };
}
interface ExchangePage {
  data: ExchangeItem[];
  next_cursor: string | null;
  refreshed_at: string | null;
}
interface BankItem {
  code: string;
  name: string;
  swift_bic: string | null;
  pesalink: boolean;
  capabilities: string[];
  routes: string[];
  source: string;
  verified_on: string;
}
interface BankDirectory {
  primary: (BankItem & { status: string; checked_at: string }) | null;
  additional: BankItem[];
  refreshed_at: string | null;
}

async function allExchanges(query: Record<string, string> = {}): Promise<ExchangeItem[]> {
  const seen: ExchangeItem[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 50; page += 1) {
    const res = await api()
      .get('/api/v1/platforms/exchanges')
      .query({ ...query, limit: '25', ...(cursor ? { cursor } : {}) });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const body = res.body as ExchangePage;
    seen.push(...body.data);
    cursor = body.next_cursor;
    if (!cursor) return seen;
  }
  throw new Error('the exchange pages never ended');
}

describe('platform discovery', () => {
  describe('when a client pages through the exchanges without a token', () => {
    it('then every active exchange comes once, in id order, binance with its capabilities', async () => {
      const all = await allExchanges();
      expect(all.length).to.be.at.least(100);
      const ids = all.map((e) => e.id);
      expect(new Set(ids).size).to.equal(ids.length);
      expect(ids).to.deep.equal([...ids].sort());
      const binance = all.find((e) => e.id === 'binance');
      expect(binance, 'binance').to.not.equal(undefined);
      expect(binance!.name).to.equal('Binance');
      expect(binance!.certified).to.equal(true);
      expect(binance!.capabilities).to.include.members(['fetchStatus', 'fetchTicker', 'withdraw', 'createOrder']);
      expect(binance!.urls.www).to.match(/^https:\/\/www\.binance\.com/);
      expect(binance!.fees.taker).to.be.a('number');
      expect(binance!.status).to.be.oneOf(['ok', 'maintenance', 'shutdown', 'error', 'unknown']);
      expect(binance).to.have.property('checked_at');
    });

    it('then the list says when the catalogue was refreshed, and a page holds at most `limit` items', async () => {
      const res = await api().get('/api/v1/platforms/exchanges?limit=5');
      expect(res.status).to.equal(200);
      const body = res.body as ExchangePage;
      expect(body.data).to.have.length(5);
      expect(body.next_cursor).to.be.a('string');
      expect(new Date(body.refreshed_at!).toISOString()).to.equal(body.refreshed_at);
      for (const item of body.data) {
        expect(item).to.include.keys('status', 'checked_at', 'countries', 'capabilities', 'fees', 'urls', 'certified', 'pro');
      }
    });
  });

  describe('when the exchanges are filtered', () => {
    it('then ?certified=true returns only certified exchanges, and ?certified=false only the others', async () => {
      const certified = await allExchanges({ certified: 'true' });
      expect(certified.length).to.be.at.least(10);
      expect(certified.every((e) => e.certified)).to.equal(true);
      expect(certified.map((e) => e.id)).to.include('binance');
      const others = await allExchanges({ certified: 'false' });
      expect(others.every((e) => !e.certified)).to.equal(true);
      expect(certified.length + others.length).to.equal((await allExchanges()).length);
    });

    it('then q matches id or name case-insensitively, and capability and country narrow it down', async () => {
      const byName = await allExchanges({ q: 'BINANCE' });
      expect(byName.map((e) => e.id)).to.include.members(['binance', 'binanceusdm', 'binancecoinm']);
      expect(byName.every((e) => `${e.id} ${e.name}`.toLowerCase().includes('binance'))).to.equal(true);

      const withdrawers = await allExchanges({ capability: 'withdraw' });
      expect(withdrawers.length).to.be.greaterThan(0);
      expect(withdrawers.every((e) => e.capabilities.includes('withdraw'))).to.equal(true);

      const american = await allExchanges({ country: 'us' });
      expect(american.length).to.be.greaterThan(0);
      expect(american.every((e) => e.countries.includes('US'))).to.equal(true);

      const none = await allExchanges({ q: 'no-such-exchange-anywhere' });
      expect(none).to.deep.equal([]);
    });

    it('then LIKE wildcards in q are matched literally', async () => {
      expect(await allExchanges({ q: '%' })).to.deep.equal([]);
      const underscored = await allExchanges({ q: '_' });
      expect(underscored.every((e) => `${e.id}${e.name}`.includes('_'))).to.equal(true);
      expect((await allExchanges({ q: 'sandbox_' })).map((e) => e.id)).to.deep.equal(['sandbox_maintenance']);
    });
  });

  describe('when a filter is bad', () => {
    const cases: [string, string, string][] = [
      ['certified is not a boolean', 'certified=maybe', 'certified'],
      ['the country is not a country code', 'country=Kenya', 'country'],
      ['the capability is unknown', 'capability=teleport', 'capability'],
      ['the limit is out of range', 'limit=500', 'limit'],
      ['the limit is not a number', 'limit=lots', 'limit'],
      ['the cursor was not issued here', 'cursor=bm90LWEtY3Vyc29y', 'cursor'],
      ['q is empty', 'q=', 'q'],
    ];
    for (const [what, query, field] of cases) {
      it(`then ${what}: a 400 problem naming ${field}`, async () => {
        const res = await api().get(`/api/v1/platforms/exchanges?${query}`);
        expect(res.status).to.equal(400);
        expect(res.headers['content-type']).to.match(/^application\/problem\+json/);
        const problem = res.body as { code: string; status: number; errors: { field: string }[]; request_id: string };
        expect(problem.code).to.equal('validation_failed');
        expect(problem.status).to.equal(400);
        expect(problem.errors.map((e) => e.field)).to.include(field);
        expect(problem.request_id).to.be.a('string').and.not.empty;
      });
    }

    it('then several bad filters are all named in one problem', async () => {
      const res = await api().get('/api/v1/platforms/exchanges?country=Kenya&capability=teleport');
      expect(res.status).to.equal(400);
      expect((res.body as { errors: { field: string }[] }).errors.map((e) => e.field)).to.have.members(['country', 'capability']);
    });
  });

  describe('when a client reads the banks without a token', () => {
    it('then 68 Equity Bank is the primary bank, with payments, balance and transactions, and its live status', async () => {
      const res = await api().get('/api/v1/platforms/banks');
      expect(res.status).to.equal(200);
      const body = res.body as BankDirectory;
      expect(body.primary).to.not.equal(null);
      expect(body.primary!.code).to.equal('68');
      expect(body.primary!.name).to.match(/^Equity Bank/);
      expect(body.primary!.swift_bic).to.equal('EQBLKENA');
      expect(body.primary!.capabilities).to.deep.equal(['payments', 'balance', 'transactions']);
      expect(body.primary!.status).to.equal('up');
      expect(body.primary!.routes).to.deep.equal(['internal']);
      expect(new Date(body.primary!.checked_at).getTime()).to.be.closeTo(Date.now(), 60_000);
      expect(body.refreshed_at).to.be.a('string');
    });

    it('then at least 35 other banks follow, KCB (01) among them, each with its source and verification date', async () => {
      const body = (await api().get('/api/v1/platforms/banks')).body as BankDirectory;
      expect(body.additional.length).to.be.at.least(35);
      expect(body.additional.map((b) => b.code)).to.not.include('68');
      const kcb = body.additional.find((b) => b.code === '01');
      expect(kcb).to.deep.include({ code: '01', name: 'KCB Bank Kenya', swift_bic: 'KCBLKENX', pesalink: true });
      expect(kcb!.capabilities).to.deep.equal(['payments']);
      expect(kcb!.routes).to.deep.equal(['pesalink', 'rtgs']);
      for (const bank of body.additional) {
        expect(bank.source).to.be.a('string').and.not.empty;
        expect(bank.verified_on).to.match(/^\d{4}-\d{2}-\d{2}$/);
      }
      const notOnPesalink = body.additional.find((b) => b.code === '05');
      expect(notOnPesalink).to.deep.include({ pesalink: false, routes: ['rtgs'] });
    });
  });

  describe('when an entry disappears from its source', () => {
    after(async () => {
      await refreshExchanges({ includeSandbox: true, probe: null });
      await refreshBanks();
    });

    it('then it is marked inactive, not deleted, and left out of the list until it comes back', async () => {
      const full = discoverExchanges({ includeSandbox: true });
      const without = { ...full, entries: full.entries.filter((e) => e.id !== 'kraken') };
      const summary = await refreshExchanges({ includeSandbox: true, probe: null, catalogue: without });
      expect(summary.deactivated).to.be.at.least(1);
      const [kraken] = await rows<{ active: boolean; deactivated_at: Date | null }>(
        "SELECT active, deactivated_at FROM exchanges WHERE id = 'kraken'",
      );
      expect(kraken).to.deep.include({ active: false });
      expect(kraken.deactivated_at).to.not.equal(null);
      expect((await allExchanges({ q: 'kraken' })).map((e) => e.id)).to.not.include('kraken');

      await refreshExchanges({ includeSandbox: true, probe: null });
      const [back] = await rows<{ active: boolean; deactivated_at: Date | null }>(
        "SELECT active, deactivated_at FROM exchanges WHERE id = 'kraken'",
      );
      expect(back).to.deep.equal({ active: true, deactivated_at: null });
    });

    it('then a bank dropped from the registry is inactive too', async () => {
      const registry = kenyanBankRegistry();
      await refreshBanks({ registry: registry.filter((b) => b.code !== '05') });
      const body = (await api().get('/api/v1/platforms/banks')).body as BankDirectory;
      expect(body.additional.map((b) => b.code)).to.not.include('05');
      const [bank] = await rows<{ active: boolean }>("SELECT active FROM banks WHERE code = '05'");
      expect(bank.active).to.equal(false);
    });
  });

  describe('when the probe answers', () => {
    after(async () => {
      await refreshExchanges({ includeSandbox: true, probe: null });
    });

    it('then each probed exchange carries its status and when it was checked; a refresh without the probe keeps them', async () => {
      const probe = {
        check: (entry: { id: string }) => Promise.resolve(entry.id === 'kraken' ? ('maintenance' as const) : ('ok' as const)),
        limits: { timeoutMs: 1000, totalMs: 5000, concurrency: 8 },
      };
      const summary = await refreshExchanges({ includeSandbox: true, probe });
      expect(summary.probed).to.be.greaterThan(30);
      const kraken = (await allExchanges({ q: 'kraken' })).find((e) => e.id === 'kraken')!;
      expect(kraken.status).to.equal('maintenance');
      expect(kraken.checked_at).to.be.a('string');

      await refreshExchanges({ includeSandbox: true, probe: null });
      const again = (await allExchanges({ q: 'kraken' })).find((e) => e.id === 'kraken')!;
      expect(again).to.deep.include({ status: 'maintenance', checked_at: kraken.checked_at });
    });
  });

  describe('when /openapi.json is read', () => {
    it('then it documents both endpoints and the fields of an exchange', async () => {
      const spec = (await api().get('/openapi.json')).body as {
        paths: Record<string, unknown>;
        components: { schemas: Record<string, { properties?: Record<string, { description?: string }> }> };
      };
      expect(spec.paths).to.include.keys('/platforms/exchanges', '/platforms/banks');
      expect(spec.components.schemas.ExchangeView?.properties?.status?.description).to.match(/fetchStatus/);
      expect(spec.components.schemas.PrimaryBankView).to.not.equal(undefined);
    });
  });
});
