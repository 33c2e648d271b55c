import { createVerify, randomBytes, type KeyObject } from 'node:crypto';
import { JENGA_PATHS, jengaSignedText, type JengaTransferBody, type JengaTransferKind } from '../../connectors/jenga';
import { noFaults, startFakeServer, type FakeFaults, type FakeServer, type HoldAnswer } from './http';

/**
 * A local Jenga (Equity Bank): merchant token (Api-Key header, merchantCode + consumerSecret), and every
 * protected call checked against the bearer token and the RSA `signature` over the documented fields with
 * the merchant's registered public key. Transfers to an account ending 0000 are refused; an amount with .13
 * cents is accepted and then FAILED for insufficient funds. The fake keeps its own books: a statement that
 * every executed transfer (and its charge) debits and every arrival credits, and the balance they leave. `faults` switches a test's failures on: a
 * transfer executed and then its answer lost or a 500, and a repeated reference refused as a duplicate (409).
 */
export interface FakeJengaOptions {
  apiKey: string;
  merchantCode: string;
  consumerSecret: string;
  publicKey: KeyObject;
  accountNumber: string;
  /** What the account held before its first statement line (the balance brought forward); default 849882.57. */
  openingBalance?: string;
  /** What the bank charges per executed transfer, as its own debit line on the statement; none by default. */
  transferCharge?: string;
  /** False: a new account, its statement empty (no lines from before Paygate); true by default. */
  history?: boolean;
}

/** One line of the fake's own books, as its mini statement writes it. */
export interface FakeJengaLine {
  date: string;
  amount: string;
  description: string;
  chequeNumber: null;
  type: 'Credit' | 'Debit';
  reference: string;
}

export interface FakeJenga extends FakeServer {
  calls: { path: string; signatureValid: boolean }[];
  /** Register another public key: the merchant's signatures no longer verify. */
  setPublicKey(key: KeyObject): void;
  transfers: Map<string, { kind: JengaTransferKind; body: JengaTransferBody; status: 'SUCCESS' | 'FAILED' }>;
  /** Money arrives on the account: a credit line appears on the statement (newest first), and stays there. */
  credit(line: { reference: string; amount: string; description: string }): void;
  /** Money leaves the account other than by a transfer Paygate asked for: a debit line on the statement. */
  debit(line: { reference: string; amount: string; description: string }): void;
  /**
   * The account's balance from the fake's own books: the opening balance, plus every credit, less every
   * debit (executed transfers and their charges included). The balance API answers this.
   */
  balance(): string;
  /** The statement as the bank keeps it, newest first. */
  statement(): readonly FakeJengaLine[];
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
  /**
   * While set, words the bank adds to its refusals and to a failed transfer's description (as a real bank's
   * may name an account, a limit or its setup): what Paygate must log and never hand to a client.
   */
  providerWords: string | undefined;
}

const fail = (status: number, code: number, message: string) => ({ status, body: { status: false, code, message } });

export async function startFakeJenga(o: FakeJengaOptions): Promise<FakeJenga> {
  const withWords = (text: string) => (fake.providerWords ? `${text}: ${fake.providerWords}` : text);
  let publicKey = o.publicKey;
  const tokens = new Set<string>();
  const calls: FakeJenga['calls'] = [];
  const transfers: FakeJenga['transfers'] = new Map();
  const faults = noFaults();
  const history: FakeJengaLine[] = [
    {
      date: '2026-11-21T10:30:00',
      amount: '2500.00',
      description: 'Pesalink transfer',
      chequeNumber: null,
      type: 'Debit',
      reference: 'S2',
    },
    {
      date: '2026-11-20T09:00:00',
      amount: '150000.00',
      description: 'Settlement inflow',
      chequeNumber: null,
      type: 'Credit',
      reference: 'S1',
    },
  ];
  const statement: FakeJengaLine[] = o.history === false ? [] : history;
  const cents = (amount: string): bigint => {
    const [whole, fraction = ''] = amount.replace(/,/g, '').split('.');
    return BigInt(whole) * 100n + BigInt(fraction.padEnd(2, '0').slice(0, 2));
  };
  const shillings = (c: bigint): string => {
    const sign = c < 0n ? '-' : '';
    const a = c < 0n ? -c : c;
    return `${sign}${a / 100n}.${(a % 100n).toString().padStart(2, '0')}`;
  };
  const opening = cents(o.openingBalance ?? '849882.57');
  const balance = () =>
    shillings(statement.reduce((sum, l) => (l.type === 'Credit' ? sum + cents(l.amount) : sum - cents(l.amount)), opening));
  const book = (type: 'Credit' | 'Debit', line: { reference: string; amount: string; description: string }) => {
    statement.unshift({ date: new Date().toISOString().slice(0, 19), chequeNumber: null, type, ...line });
  };
  /** A transfer the bank executed leaves the account, with the bank's charge for it when it charges one. */
  const executed = (kind: JengaTransferKind, body: JengaTransferBody) => {
    const reference = body.transfer.reference;
    book('Debit', { reference, amount: body.transfer.amount, description: `${kind.toUpperCase()} TRANSFER ${reference}` });
    if (o.transferCharge && cents(o.transferCharge) > 0n) {
      book('Debit', { reference: `CHG${reference}`, amount: o.transferCharge, description: `TRANSACTION CHARGES ${reference}` });
    }
  };
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
      if (body.destination.accountNumber?.endsWith('0000'))
        return Promise.resolve(fail(400, 110005, withWords('Invalid destination account number')));
      const fraction = body.transfer.amount.split('.')[1] ?? '';
      const existing = transfers.get(body.transfer.reference);
      if (existing && faults.refuseDuplicates) return Promise.resolve(fail(409, 110011, 'Duplicate transaction reference'));
      if (!existing) {
        const status = fraction.startsWith('13') ? 'FAILED' : 'SUCCESS';
        transfers.set(body.transfer.reference, { kind, body, status });
        if (status === 'SUCCESS') executed(kind, body);
      }
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
                { amount: balance(), type: 'Current' },
                { amount: balance(), type: 'Available' },
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
          data: { balance: balance(), currency: 'KES', accountNumber: acc, transactions: statement },
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
            description: t.status === 'FAILED' ? withWords('Insufficient funds') : 'Completed',
          },
        },
      });
    }
    return Promise.resolve(fail(404, 404, 'Not found'));
  });
  const credit: FakeJenga['credit'] = (line) => book('Credit', line);
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
    debit: (line) => book('Debit', line),
    balance,
    statement: () => statement,
    returnPayout,
    topUp,
    faults,
    holdAnswer: undefined,
    providerWords: undefined,
  };
  return fake;
}
