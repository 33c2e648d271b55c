import { expect } from 'chai';
import { createConnectors, type ConnectorPorts } from '../../connectors';
import { DarajaConnector } from '../../connectors/daraja';
import { ProviderClient } from '../../connectors/provider-http';
import { loadConfig } from '../../platform/config';

const ports: ConnectorPorts = {
  sandboxBooks: {
    submitTransfer: () => Promise.reject(new Error('not in this test')),
    findTransfer: () => Promise.resolve(undefined),
    markCallbackSent: () => Promise.resolve(),
  },
  exchangeStatus: () => Promise.resolve(null),
};

/** A provider that hands out numbered tokens and answers every other call with `status`. */
function fakeProvider(status: () => number) {
  const calls: { url: string; authorization: string | undefined }[] = [];
  let tokens = 0;
  const fetchImpl: typeof fetch = (input, init) => {
    const url = input instanceof Request ? input.url : input.toString();
    const authorization = (init?.headers as Record<string, string> | undefined)?.authorization;
    calls.push({ url, authorization });
    if (url.endsWith('/token')) {
      tokens += 1;
      return Promise.resolve(new Response(JSON.stringify({ token: `t${tokens}` }), { status: 200 }));
    }
    return Promise.resolve(new Response('{}', { status: status() }));
  };
  const client = new ProviderClient('Fake', 'http://provider.test', fetchImpl, async (c) => {
    const res = await c.request('/token', { method: 'POST', headers: {} });
    return { value: String(res.body.token), expiresAt: Date.now() + 60_000 };
  });
  return { client, calls, tokensFetched: () => tokens };
}

describe('connectors', () => {
  describe('when every method is on the sandbox', () => {
    it('then the sandbox carries payouts and collections, and no bank or exchange capability is offered', () => {
      const connectors = createConnectors(loadConfig({}), ports);
      expect([connectors.bank_transfer.name, connectors.mobile_money.name, connectors.crypto.name]).to.deep.equal([
        'sandbox',
        'sandbox',
        'sandbox',
      ]);
      expect(connectors.collections.name).to.equal('sandbox');
      expect([
        connectors.bankBalance,
        connectors.bankStatement,
        connectors.exchangeHoldings,
        connectors.depositAddresses,
        connectors.receivedDeposits,
        connectors.paybill,
      ]).to.deep.equal([null, null, null, null, null, null]);
    });
  });

  describe('when a provider is called through the shared client', () => {
    it('then the token is fetched once and reused while it is valid', async () => {
      const provider = fakeProvider(() => 200);
      await provider.client.authorised('GET', '/a', {});
      await provider.client.authorised('POST', '/b', {}, { x: 1 });
      expect(provider.tokensFetched()).to.equal(1);
      expect(provider.calls.filter((c) => !c.url.endsWith('/token')).map((c) => c.authorization)).to.deep.equal(['Bearer t1', 'Bearer t1']);
    });

    it('then a 401 drops the token and the next call fetches another, unless the refusal was not the token', async () => {
      let answer = 401;
      const provider = fakeProvider(() => answer);
      await provider.client.authorised('GET', '/a', {}, undefined, () => true);
      await provider.client.authorised('GET', '/a', {});
      answer = 200;
      await provider.client.authorised('GET', '/a', {});
      expect(provider.tokensFetched()).to.equal(2);
    });
  });

  describe('when Daraja is asked about a request the caller did not give it', () => {
    it('then it answers unknown_reference without reading anything of ours', async () => {
      const daraja = new DarajaConnector({
        baseUrl: 'http://daraja.test',
        consumerKey: 'k',
        consumerSecret: 's',
        shortcode: '174379',
        passkey: 'p',
        transactionType: 'CustomerPayBillOnline',
        callbackSecret: 'secret',
        publicBaseUrl: 'http://paygate.test',
        b2c: { initiatorName: 'i', securityCredential: 'c' },
        fetchImpl: () => Promise.reject(new Error('no call expected')),
      });
      const err = await daraja.status('ws_CO_1').catch((e: unknown) => e);
      expect(err).to.deep.include({ failureCode: 'unknown_reference', retryable: false });
    });

    it('then a request the caller recorded as resolved is answered from the record, without asking Daraja', async () => {
      const daraja = new DarajaConnector({
        baseUrl: 'http://daraja.test',
        consumerKey: 'k',
        consumerSecret: 's',
        shortcode: '174379',
        passkey: 'p',
        transactionType: 'CustomerPayBillOnline',
        callbackSecret: 'secret',
        publicBaseUrl: 'http://paygate.test',
        b2c: { initiatorName: 'i', securityCredential: 'c' },
        fetchImpl: () => Promise.reject(new Error('no call expected')),
      });
      const request = {
        orderId: 'o-1',
        kind: 'stk' as const,
        providerReference: 'ws_CO_1',
        merchantReference: 'm-1',
        status: 'failed' as const,
        resultCode: '1032',
        resultDesc: 'Request cancelled by user',
      };
      expect(await daraja.status('ws_CO_1', { request })).to.deep.include({
        state: 'failed',
        reference: 'ws_CO_1',
        failureCode: 'cancelled_by_user',
      });
    });
  });
});
