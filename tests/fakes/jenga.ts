import { createVerify, randomBytes, type KeyObject } from 'node:crypto';
import { JENGA_PATHS, jengaSignedText, type JengaTransferBody, type JengaTransferKind } from '../../connectors/jenga';
import { noFaults, startFakeServer, type FakeFaults, type FakeServer, type HoldAnswer } from './http';

/**
 * A local Jenga (Equity Bank): merchant token (Api-Key header, merchantCode + consumerSecret), and every
 * protected call checked against the bearer token and the RSA `signature` over the documented fields with
 * the merchant's registered public key. Transfers to an account ending 0000 are refused; an amount with .13
 * cents is accepted and then FAILED for insufficient funds. `faults` switches a test's failures on: a
 * transfer executed and then its answer lost or a 500, and a repeated reference refused as a duplicate (409).
 */
export interface FakeJengaOptions {
  apiKey: string;
  merchantCode: string;
  consumerSecret: string;
  publicKey: KeyObject;
  accountNumber: string;
}

export interface FakeJenga extends FakeServer {
  calls: { path: string; signatureValid: boolean }[];
  /** Register another public key: the merchant's signatures no longer verify. */
  setPublicKey(key: KeyObject): void;
  transfers: Map<string, { kind: JengaTransferKind; body: JengaTransferBody; status: 'SUCCESS' | 'FAILED' }>;
  /** Money arrives on the account: a credit line appears on the statement (newest first), and stays there. */
  credit(line: { reference: string; amount: string; description: string }): void;
  faults: FakeFaults;
  /**
   * One of Paygate's payouts comes back (the beneficiary's bank refused it): a credit whose narration names
   * the payout's reference after RETURN. Returns the line's own bank reference.
   */
  returnPayout(p: { payoutReference: string; amount: string }): string;
  /** The operator tops up the account: a credit whose narration carries the PGFLOAT marker. Returns its bank reference. */
  topUp(amount: string): string;
  /** Holds a new transfer's answer (see `HoldAnswer`), called with the transfer's reference. */
  holdAnswer: HoldAnswer;
}

const fail = (status: number, code: number, message: string) => ({ status, body: { status: false, code, message } });

export async function startFakeJenga(o: FakeJengaOptions): Promise<FakeJenga> {
  let publicKey = o.publicKey;
  const tokens = new Set<string>();
  const calls: FakeJenga['calls'] = [];
  const transfers: FakeJenga['transfers'] = new Map();
  const faults = noFaults();
  const statement = [
    {
      date: '2026-11-20T09:00:00',
      amount: '150000.00',
      description: 'Settlement inflow',
      chequeNumber: null,
      type: 'Credit',
      reference: 'S1',
    },
    {
      date: '2026-11-21T10:30:00',
      amount: '2500.00',
      description: 'Pesalink transfer',
      chequeNumber: null,
      type: 'Debit',
      reference: 'S2',
    },
  ];
  const verify = (text: string, signature: string | undefined) =>
    !!signature && createVerify('RSA-SHA256').update(text).verify(publicKey, signature, 'base64');
  const kindOf: Record<string, JengaTransferKind> = {
    [JENGA_PATHS.internal]: 'internal',
    [JENGA_PATHS.pesalink]: 'pesalink',
    [JENGA_PATHS.rtgs]: 'rtgs',
    [JENGA_PATHS.mobile]: 'mobile',
  };
  const server = await startFakeServer((req) => {
    if (req.path === JENGA_PATHS.token) {
      const b = req.json<{ merchantCode?: string; consumerSecret?: string }>();
      if (req.headers['api-key'] !== o.apiKey || b.merchantCode !== o.merchantCode || b.consumerSecret !== o.consumerSecret) {
        return Promise.resolve(fail(401, 401, 'Invalid credentials'));
      }
      const token = randomBytes(16).toString('hex');
      tokens.add(token);
      const expiresIn = new Date(Date.now() + 3600_000).toISOString();
      return Promise.resolve({
        status: 200,
        body: { accessToken: token, refreshToken: 'r', expiresIn, issuedAt: new Date().toISOString(), tokenType: 'bearer' },
      });
    }
    if (!tokens.has((req.headers.authorization ?? '').replace(/^Bearer /, ''))) return Promise.resolve(fail(401, 401, 'Invalid token'));
    const signature = req.headers.signature as string | undefined;
    const kind = kindOf[req.path];
    if (req.method === 'POST' && kind) {
      const body = req.json<JengaTransferBody>();
      const ok = verify(jengaSignedText(kind, body), signature);
      calls.push({ path: req.path, signatureValid: ok });
      if (!ok) return Promise.resolve(fail(401, 401107, 'Invalid signature'));
      if (body.source.accountNumber !== o.accountNumber) return Promise.resolve(fail(400, 110003, 'Invalid source account'));
      if (body.destination.accountNumber?.endsWith('0000')) return Promise.resolve(fail(400, 110005, 'Invalid destination account number'));
      const cents = body.transfer.amount.split('.')[1] ?? '';
      const existing = transfers.get(body.transfer.reference);
      if (existing && faults.refuseDuplicates) return Promise.resolve(fail(409, 110011, 'Duplicate transaction reference'));
      if (!existing) transfers.set(body.transfer.reference, { kind, body, status: cents.startsWith('13') ? 'FAILED' : 'SUCCESS' });
      const fault = existing ? undefined : faults.afterExecuting.shift();
      if (fault === 'drop') return Promise.resolve({ status: 0, drop: true });
      if (fault === '5xx') return Promise.resolve(fail(500, 500, 'Internal server error'));
      const held = existing || !fake.holdAnswer ? Promise.resolve() : fake.holdAnswer(body.transfer.reference);
      return held.then(() => ({
        status: 200,
        body: {
          status: true,
          code: 0,
          message: 'success',
          data: { reference: body.transfer.reference, transactionId: randomBytes(5).toString('hex'), status: 'SUCCESS' },
        },
      }));
    }
    const account = /^\/v3-apis\/account-api\/v3\.0\/accounts\/(balances|miniStatement)\/(\w+)\/(\w+)$/.exec(req.path);
    if (req.method === 'GET' && account) {
      const [, what, cc, acc] = account;
      const ok = verify(`${cc}${acc}`, signature);
      calls.push({ path: req.path, signatureValid: ok });
      if (!ok) return Promise.resolve(fail(401, 401107, 'Invalid signature'));
      if (acc !== o.accountNumber) return Promise.resolve(fail(404, 110004, 'Account not found'));
      if (what === 'balances') {
        return Promise.resolve({
          status: 200,
          body: {
            status: true,
            code: 0,
            message: 'success',
            data: {
              currency: 'KES',
              balances: [
                { amount: '997382.57', type: 'Current' },
                { amount: '997382.57', type: 'Available' },
              ],
            },
          },
        });
      }
      return Promise.resolve({
        status: 200,
        body: {
          status: true,
          code: 0,
          message: 'success',
          data: { balance: '997382.57', currency: 'KES', accountNumber: acc, transactions: statement },
        },
      });
    }
    if (req.method === 'GET' && req.path.startsWith(`${JENGA_PATHS.status}/`)) {
      const reference = decodeURIComponent(req.path.slice(JENGA_PATHS.status.length + 1));
      const ok = verify(reference, signature);
      calls.push({ path: req.path, signatureValid: ok });
      if (!ok) return Promise.resolve(fail(401, 401107, 'Invalid signature'));
      const t = transfers.get(reference);
      if (!t) return Promise.resolve(fail(404, 110010, 'Transaction not found'));
      return Promise.resolve({
        status: 200,
        body: {
          status: true,
          code: 0,
          message: 'success',
          data: {
            transactionReference: reference,
            status: t.status,
            amount: t.body.transfer.amount,
            description: t.status === 'FAILED' ? 'Insufficient funds' : 'Completed',
          },
        },
      });
    }
    return Promise.resolve(fail(404, 404, 'Not found'));
  });
  const credit: FakeJenga['credit'] = (line) => {
    statement.unshift({ date: new Date().toISOString().slice(0, 19), chequeNumber: null, type: 'Credit', ...line });
  };
  const bankReference = () => `FT${randomBytes(6).toString('hex').toUpperCase()}`;
  const returnPayout: FakeJenga['returnPayout'] = ({ payoutReference, amount }) => {
    const reference = bankReference();
    credit({ reference, amount, description: `RETURN ${payoutReference} ACCOUNT CLOSED` });
    return reference;
  };
  const topUp: FakeJenga['topUp'] = (amount) => {
    const reference = bankReference();
    credit({ reference, amount, description: 'PGFLOAT operator float top-up' });
    return reference;
  };
  const fake: FakeJenga = {
    ...server,
    calls,
    transfers,
    setPublicKey: (key) => (publicKey = key),
    credit,
    returnPayout,
    topUp,
    faults,
    holdAnswer: undefined,
  };
  return fake;
}
