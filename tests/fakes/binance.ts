import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { noFaults, startFakeServer, type FakeFaults, type FakeRequest, type FakeServer, type HoldAnswer } from './http';

/**
 * A local Binance, for the calls ccxt's `binance` makes when Paygate withdraws: the exchange and currency
 * metadata `loadMarkets` reads, `POST /sapi/v1/capital/withdraw/apply`, `GET /sapi/v1/capital/withdraw/history`
 * and `GET /sapi/v1/system/status`. Signed endpoints are checked as Binance documents them: the
 * `X-MBX-APIKEY` header names the key, `signature` is the hex HMAC-SHA256 of the query string concatenated
 * with the body (without the signature) under the key's secret, and `timestamp` must lie within
 * `recvWindow` of the server's clock. Errors come in Binance's shape (`{code, msg}`).
 *
 * A withdrawal is `processing` (status 4) until `settleAfterMs` has passed, then `completed` (6); one that
 * exceeds the account's free balance is refused with -4026; an address ending `FAIL` is `failure` (5). The
 * history answers one page (at most 1000, newest first), filtered as Binance filters it.
 * Each withdrawal keeps its `amount` as the raw string received, so tests see exactly what was sent.
 *
 * Money in: `GET /sapi/v1/capital/deposit/address` answers one address per coin and network, and
 * `GET /sapi/v1/capital/deposit/hisrec` lists the deposits a test made arrive (`deposit()`), filtered by coin,
 * status and time as Binance filters them, newest first. A deposit is `pending` (status 0) until the test
 * confirms it (status 1, success); Binance writes its amount as a decimal string, kept here as given.
 */
export interface FakeBinanceOptions {
  apiKey: string;
  secret: string;
  settleAfterMs?: number;
  /** Free balance per coin; default 1,000,000 of each. */
  balances?: Record<string, number>;
  /** Withdrawal step (`withdrawIntegerMultiple`) per coin; default 1e-18 for ETH (one wei), 1e-8 BTC, 1e-6 others. */
  withdrawSteps?: Record<string, string>;
}

export interface FakeWithdrawal {
  id: string;
  coin: string;
  network: string;
  address: string;
  /** The `amount` parameter exactly as it arrived on the wire. */
  amount: string;
  withdrawOrderId: string | undefined;
  applyTime: number;
  fail: boolean;
}

/** A deposit into the account, as `deposit/hisrec` lists it. */
export interface FakeDeposit {
  coin: string;
  network: string;
  amount: string;
  address: string;
  addressTag: string;
  txId: string;
  sourceAddress: string;
  insertTime: number;
  /** 0 pending, 1 success (credited), as Binance numbers them. */
  status: 0 | 1;
}

export interface FakeBinance extends FakeServer {
  withdrawals: FakeWithdrawal[];
  deposits: FakeDeposit[];
  /**
   * Money arrives in the account: pending until `confirmed` is true (the default) or the test sets status 1.
   * Two deposits with the same `txId` (and different tags) are one batched transaction's two outputs.
   */
  deposit(d: {
    coin: string;
    amount: string;
    tag?: string;
    txId?: string;
    network?: string;
    confirmed?: boolean;
    sourceAddress?: string;
  }): FakeDeposit;
  /** What the account holds of a coin, as `GET /api/v3/account` writes it (eight decimals): withdrawals out, confirmed deposits in. */
  accountBalance(coin: string): string;
  /** The account's deposit address for a coin on a network (the first network when none is named). */
  depositAddress(coin: string, network?: string): string;
  /** Every signed call: its path and whether the signature verified. */
  signed: { path: string; valid: boolean }[];
  setSecret(secret: string): void;
  /** Holds a new withdrawal's answer (see `HoldAnswer`), called with its `withdrawOrderId` (else its id). */
  holdAnswer: HoldAnswer;
  /** A test's failures: a withdrawal applied and then its answer lost or a 5xx; a repeated `withdrawOrderId` refused. */
  faults: FakeFaults;
}

const COINS: { coin: string; name: string; networks: { network: string; name: string; fee: string; min: string }[] }[] = [
  {
    coin: 'USDT',
    name: 'TetherUS',
    networks: [
      { network: 'TRX', name: 'Tron (TRC20)', fee: '1', min: '10' },
      { network: 'ETH', name: 'Ethereum (ERC20)', fee: '4', min: '10' },
    ],
  },
  { coin: 'USDC', name: 'USD Coin', networks: [{ network: 'ETH', name: 'Ethereum (ERC20)', fee: '4', min: '10' }] },
  { coin: 'BTC', name: 'Bitcoin', networks: [{ network: 'BTC', name: 'Bitcoin', fee: '0.0002', min: '0.001' }] },
  { coin: 'ETH', name: 'Ethereum', networks: [{ network: 'ETH', name: 'Ethereum (ERC20)', fee: '0.001', min: '0.01' }] },
];

const problem = (status: number, code: number, msg: string) => ({ status, body: { code, msg } });
const STATUS_PROCESSING = 4;
const STATUS_FAILURE = 5;
const STATUS_COMPLETED = 6;

export async function startFakeBinance(o: FakeBinanceOptions): Promise<FakeBinance> {
  let secret = o.secret;
  const withdrawals: FakeWithdrawal[] = [];
  const faults = noFaults();
  const deposits: FakeDeposit[] = [];
  const depositAddress = (coin: string, network?: string) => {
    const on = network ?? COINS.find((c) => c.coin === coin)?.networks[0].network ?? 'ETH';
    const seed = createHmac('sha256', 'fake-binance-deposit-address').update(`${coin}:${on}`).digest('hex');
    return on === 'TRX' ? `T${seed.slice(0, 33)}` : on === 'BTC' ? `bc1q${seed.slice(0, 38)}` : `0x${seed.slice(0, 40)}`;
  };
  const deposit: FakeBinance['deposit'] = (d) => {
    const meta = COINS.find((c) => c.coin === d.coin);
    const network = d.network ?? meta?.networks[0].network ?? 'ETH';
    const made: FakeDeposit = {
      coin: d.coin,
      network,
      amount: d.amount,
      address: depositAddress(d.coin, network),
      addressTag: d.tag ?? '',
      txId: d.txId ?? `0x${randomBytes(32).toString('hex')}`,
      sourceAddress: d.sourceAddress ?? `0x${randomBytes(20).toString('hex')}`,
      insertTime: Date.now(),
      status: d.confirmed === false ? 0 : 1,
    };
    deposits.push(made);
    return made;
  };
  const signed: FakeBinance['signed'] = [];
  // A fake's arithmetic: JS numbers, shown with Binance's eight decimals.
  const accountBalance = (coin: string): string =>
    (
      (balances.get(coin) ?? 0) + deposits.filter((d) => d.coin === coin && d.status === 1).reduce((sum, d) => sum + Number(d.amount), 0)
    ).toFixed(8);
  const balances = new Map(COINS.map((c) => [c.coin, o.balances?.[c.coin] ?? 1_000_000]));

  /** Binance's check of a SIGNED endpoint; the request's parameters when it passes, else the error answer. */
  const verify = (req: FakeRequest): { params: URLSearchParams } | { status: number; body: unknown } => {
    if (req.headers['x-mbx-apikey'] !== o.apiKey) return problem(401, -2015, 'Invalid API-key, IP, or permissions for action.');
    const strip = (text: string) =>
      text
        .split('&')
        .filter((part) => part && !part.startsWith('signature='))
        .join('&');
    const total = strip(req.rawQuery) + strip(req.rawBody);
    const params = new URLSearchParams(`${req.rawQuery}&${req.rawBody}`);
    const given = Buffer.from(params.get('signature') ?? '', 'utf8');
    const expected = Buffer.from(createHmac('sha256', secret).update(total).digest('hex'), 'utf8');
    const valid = given.length === expected.length && timingSafeEqual(given, expected);
    signed.push({ path: req.path, valid });
    if (!valid) return problem(400, -1022, 'Signature for this request is not valid.');
    const timestamp = Number(params.get('timestamp'));
    const recvWindow = Number(params.get('recvWindow') ?? 5000);
    if (!Number.isFinite(timestamp) || Math.abs(Date.now() - timestamp) > Math.min(recvWindow, 60_000)) {
      return problem(400, -1021, 'Timestamp for this request is outside of the recvWindow.');
    }
    return { params };
  };

  const withdrawStep = (coin: string): string =>
    o.withdrawSteps?.[coin] ?? (coin === 'ETH' ? '0.000000000000000001' : coin === 'BTC' ? '0.00000001' : '0.000001');

  const statusOf = (w: FakeWithdrawal) =>
    Date.now() < w.applyTime + (o.settleAfterMs ?? 300) ? STATUS_PROCESSING : w.fail ? STATUS_FAILURE : STATUS_COMPLETED;
  const exchangeInfo = () => ({ timezone: 'UTC', serverTime: Date.now(), rateLimits: [], exchangeFilters: [], symbols: [] });

  const server = await startFakeServer((req) => {
    const route = `${req.method} ${req.path}`;
    if (route === 'GET /api/v3/exchangeInfo' || route === 'GET /fapi/v1/exchangeInfo' || route === 'GET /dapi/v1/exchangeInfo') {
      return Promise.resolve({ status: 200, body: exchangeInfo() });
    }
    if (route === 'GET /sapi/v1/system/status') return Promise.resolve({ status: 200, body: { status: 0, msg: 'normal' } });
    if (route === 'GET /sapi/v1/margin/allPairs' || route === 'GET /sapi/v1/margin/isolated/allPairs') {
      return Promise.resolve({ status: 200, body: [] });
    }
    const checked = verify(req);
    if (!('params' in checked)) return Promise.resolve(checked);
    const { params } = checked;
    if (route === 'GET /sapi/v1/capital/config/getall') {
      return Promise.resolve({
        status: 200,
        body: COINS.map((c) => ({
          coin: c.coin,
          name: c.name,
          free: String(balances.get(c.coin) ?? 0),
          locked: '0',
          freeze: '0',
          withdrawing: '0',
          depositAllEnable: true,
          withdrawAllEnable: true,
          trading: true,
          isLegalMoney: false,
          networkList: c.networks.map((n, i) => ({
            coin: c.coin,
            network: n.network,
            name: n.name,
            isDefault: i === 0,
            depositEnable: true,
            withdrawEnable: true,
            withdrawFee: n.fee,
            withdrawMin: n.min,
            withdrawMax: '10000000',
            withdrawIntegerMultiple: withdrawStep(c.coin),
            addressRegex: '',
            memoRegex: '',
          })),
        })),
      });
    }
    if (route === 'POST /sapi/v1/capital/withdraw/apply') {
      const coin = params.get('coin') ?? '';
      const address = params.get('address') ?? '';
      const rawAmount = params.get('amount') ?? '';
      const amount = Number(rawAmount);
      const meta = COINS.find((c) => c.coin === coin);
      if (!meta) return Promise.resolve(problem(400, -4003, 'Invalid coin.'));
      const network = params.get('network') ?? meta.networks[0].network;
      if (!meta.networks.some((n) => n.network === network)) return Promise.resolve(problem(400, -4018, 'Invalid network.'));
      if (!address) return Promise.resolve(problem(400, -4004, 'Invalid address.'));
      if (!(amount > 0)) return Promise.resolve(problem(400, -4005, 'Invalid amount.'));
      const withdrawOrderId = params.get('withdrawOrderId') ?? undefined;
      const again = withdrawOrderId ? withdrawals.find((w) => w.withdrawOrderId === withdrawOrderId) : undefined;
      if (again && faults.refuseDuplicates) return Promise.resolve(problem(400, -4111, 'withdrawOrderId is duplicated.'));
      if (again) return Promise.resolve({ status: 200, body: { id: again.id } });
      const free = balances.get(coin) ?? 0;
      if (amount > free) return Promise.resolve(problem(400, -4026, 'You have insufficient balance.'));
      balances.set(coin, free - amount);
      const w: FakeWithdrawal = {
        id: randomBytes(16).toString('hex'),
        coin,
        network,
        address,
        amount: rawAmount,
        withdrawOrderId,
        applyTime: Date.now(),
        fail: address.endsWith('FAIL'),
      };
      withdrawals.push(w);
      const fault = faults.afterExecuting.shift();
      if (fault === 'drop') return Promise.resolve({ status: 0, drop: true });
      if (fault === '5xx') return Promise.resolve({ status: 503 });
      const held = fake.holdAnswer ? fake.holdAnswer(withdrawOrderId ?? w.id) : Promise.resolve();
      return held.then(() => ({ status: 200, body: { id: w.id } }));
    }
    if (route === 'GET /sapi/v1/capital/withdraw/history') {
      // As Binance: filtered by coin, ids (`idList`), `withdrawOrderId` and time, newest first, one page of `limit` (1000).
      const coin = params.get('coin');
      const ids = params.get('idList')?.split(',');
      const withdrawOrderId = params.get('withdrawOrderId');
      const startTime = Number(params.get('startTime') ?? 0);
      const endTime = Number(params.get('endTime') ?? Number.MAX_SAFE_INTEGER);
      const limit = Math.min(Number(params.get('limit') ?? 1000), 1000);
      return Promise.resolve({
        status: 200,
        body: withdrawals
          .filter((w) => !coin || w.coin === coin)
          .filter((w) => !ids || ids.includes(w.id))
          .filter((w) => !withdrawOrderId || w.withdrawOrderId === withdrawOrderId)
          .filter((w) => w.applyTime >= startTime && w.applyTime <= endTime)
          .sort((a, b) => b.applyTime - a.applyTime)
          .slice(0, limit)
          .map((w) => ({
            id: w.id,
            amount: w.amount,
            transactionFee: '1',
            coin: w.coin,
            status: statusOf(w),
            address: w.address,
            txId: statusOf(w) === STATUS_COMPLETED ? `0x${w.id}` : '',
            applyTime: new Date(w.applyTime).toISOString().replace('T', ' ').slice(0, 19),
            network: w.network,
            transferType: 0,
            ...(w.withdrawOrderId ? { withdrawOrderId: w.withdrawOrderId } : {}),
            info: '',
            confirmNo: 1,
            walletType: 0,
            txKey: '',
          })),
      });
    }
    if (route === 'GET /api/v3/account') {
      return Promise.resolve({
        status: 200,
        body: {
          makerCommission: 10,
          takerCommission: 10,
          canTrade: true,
          canWithdraw: true,
          canDeposit: true,
          updateTime: Date.now(),
          accountType: 'SPOT',
          balances: COINS.map((c) => ({ asset: c.coin, free: accountBalance(c.coin), locked: '0.00000000' })),
          permissions: ['SPOT'],
        },
      });
    }
    if (route === 'GET /sapi/v1/capital/deposit/address') {
      const coin = params.get('coin') ?? '';
      const meta = COINS.find((c) => c.coin === coin);
      if (!meta) return Promise.resolve(problem(400, -4003, 'Invalid coin.'));
      const network = params.get('network') ?? meta.networks[0].network;
      if (!meta.networks.some((n) => n.network === network)) return Promise.resolve(problem(400, -4018, 'Invalid network.'));
      return Promise.resolve({ status: 200, body: { coin, address: depositAddress(coin, network), tag: '' } });
    }
    if (route === 'GET /sapi/v1/capital/deposit/hisrec') {
      // As Binance: filtered by coin, status and time (the last 90 days without startTime), newest first, one page.
      const coin = params.get('coin');
      const status = params.get('status');
      const startTime = Number(params.get('startTime') ?? Date.now() - 90 * 24 * 3600 * 1000);
      const endTime = Number(params.get('endTime') ?? Number.MAX_SAFE_INTEGER);
      const limit = Math.min(Number(params.get('limit') ?? 1000), 1000);
      return Promise.resolve({
        status: 200,
        body: deposits
          .filter((d) => !coin || d.coin === coin)
          .filter((d) => status === null || String(d.status) === status)
          .filter((d) => d.insertTime >= startTime && d.insertTime <= endTime)
          .sort((a, b) => b.insertTime - a.insertTime)
          .slice(0, limit)
          .map((d) => ({
            // One id per output credited: a batched transaction paying the account twice is two deposits.
            id: createHmac('sha256', 'fake-binance-deposit-id').update(`${d.txId}:${d.address}:${d.addressTag}`).digest('hex').slice(0, 19),
            amount: d.amount,
            coin: d.coin,
            network: d.network,
            status: d.status,
            address: d.address,
            addressTag: d.addressTag,
            txId: d.txId,
            insertTime: d.insertTime,
            transferType: 0,
            confirmTimes: d.status === 1 ? '12/12' : '1/12',
            unlockConfirm: 0,
            walletType: 0,
            sourceAddress: d.sourceAddress,
          })),
      });
    }
    return Promise.resolve(problem(404, -1100, `Unknown endpoint ${route}`));
  });
  const fake: FakeBinance = {
    ...server,
    withdrawals,
    deposits,
    deposit,
    depositAddress,
    accountBalance,
    signed,
    setSecret: (next) => (secret = next),
    faults,
    holdAnswer: undefined,
  };
  return fake;
}
