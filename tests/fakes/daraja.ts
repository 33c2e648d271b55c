import { randomBytes } from 'node:crypto';
import { startFakeServer, type FakeRequest, type FakeServer } from './http';

/**
 * A local Daraja: OAuth client-credentials tokens, STK Push (checks the Basic credentials, the bearer token
 * and Password = base64(shortcode + passkey + timestamp)), the STK query, and callbacks POSTed to the
 * CallBackURL in Daraja's shape. Outcomes follow the sandbox's magic phones: 2547000XXXXX answers
 * ResultCode XXXXX (254700000001: 1, insufficient funds); 254700000017/26 are busy on the first push;
 * 254700000999 never calls back. A push without a valid phone number is refused, as Daraja refuses it.
 */
export interface FakeDarajaOptions {
  consumerKey: string;
  consumerSecret: string;
  shortcode: string;
  passkey: string;
  callbackDelayMs?: number;
}

interface Push {
  checkout: string;
  merchant: string;
  phone: string;
  /** The AccountReference of the push (the last 12 hex digits of Paygate's order id). */
  accountReference: string;
  resultCode: string;
  settlesAt: number;
  callbackUrl: string;
}

export interface FakeDaraja extends FakeServer {
  calls: { path: string; body: Record<string, unknown> }[];
  pushes: Map<string, Push>;
  /** Phones whose callback is held back (the query must resolve them). */
  silentPhones: Set<string>;
}

const SILENT = '254700000999';

export async function startFakeDaraja(o: FakeDarajaOptions): Promise<FakeDaraja> {
  const tokens = new Set<string>();
  const pushes = new Map<string, Push>();
  const busySeen = new Set<string>();
  const calls: FakeDaraja['calls'] = [];
  const silentPhones = new Set([SILENT]);
  const error = (status: number, errorCode: string, errorMessage: string) => ({
    status,
    body: { requestId: randomBytes(6).toString('hex'), errorCode, errorMessage },
  });
  const authorised = (req: FakeRequest) => tokens.has((req.headers.authorization ?? '').replace(/^Bearer /, ''));
  const passwordValid = (b: Record<string, unknown>) =>
    b.BusinessShortCode === o.shortcode &&
    typeof b.Timestamp === 'string' &&
    /^\d{14}$/.test(b.Timestamp) &&
    b.Password === Buffer.from(`${o.shortcode}${o.passkey}${b.Timestamp}`).toString('base64');

  const sendCallback = async (p: Push) => {
    const ok = p.resultCode === '0';
    const body = {
      Body: {
        stkCallback: {
          MerchantRequestID: p.merchant,
          CheckoutRequestID: p.checkout,
          ResultCode: Number(p.resultCode),
          ResultDesc: ok ? 'The service request is processed successfully.' : `Result ${p.resultCode}`,
          ...(ok
            ? {
                CallbackMetadata: {
                  Item: [
                    { Name: 'Amount', Value: 1 },
                    { Name: 'MpesaReceiptNumber', Value: `RCP${p.checkout.slice(-7).toUpperCase()}` },
                    { Name: 'PhoneNumber', Value: Number(p.phone) },
                  ],
                },
              }
            : {}),
        },
      },
    };
    await fetch(p.callbackUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).catch(
      () => undefined,
    );
  };

  const server = await startFakeServer((req) => {
    const body = req.json<Record<string, unknown>>();
    calls.push({ path: req.path, body });
    if (req.path === '/oauth/v1/generate') {
      const expected = `Basic ${Buffer.from(`${o.consumerKey}:${o.consumerSecret}`).toString('base64')}`;
      if (req.query.get('grant_type') !== 'client_credentials' || req.headers.authorization !== expected) {
        return Promise.resolve(error(400, '400.008.01', 'Invalid Authentication passed'));
      }
      const token = randomBytes(16).toString('hex');
      tokens.add(token);
      return Promise.resolve({ status: 200, body: { access_token: token, expires_in: '3599' } });
    }
    if (!authorised(req)) return Promise.resolve(error(401, '404.001.03', 'Invalid Access Token'));
    if (req.path === '/mpesa/stkpush/v1/processrequest') {
      if (!passwordValid(body)) return Promise.resolve(error(400, '400.002.02', 'Bad Request - Invalid Password'));
      const amount = body.Amount;
      const phone = typeof body.PhoneNumber === 'string' || typeof body.PhoneNumber === 'number' ? String(body.PhoneNumber) : '';
      const accountRef = typeof body.AccountReference === 'string' ? body.AccountReference : '';
      if (typeof amount !== 'number' || !Number.isInteger(amount) || amount < 1) {
        return Promise.resolve(error(400, '400.002.02', 'Bad Request - Invalid Amount'));
      }
      if (!/^254[17]\d{8}$/.test(phone) || accountRef.length > 12) {
        return Promise.resolve(error(400, '400.002.02', 'Bad Request - Invalid PhoneNumber'));
      }
      const magic = /^254700(\d{6})$/.exec(phone);
      const code = magic ? String(Number(magic[1])) : '0';
      if ((code === '17' || code === '26') && !busySeen.has(`${phone}:${accountRef}`)) {
        busySeen.add(`${phone}:${accountRef}`);
        return Promise.resolve(error(503, code, 'System is busy. Please try again in few minutes.'));
      }
      const known = ['0', '1', '1001', '1019', '1025', '1032', '1037', '2001', '9999'];
      const push: Push = {
        checkout: `ws_CO_${Date.now()}${randomBytes(4).toString('hex')}`,
        merchant: `${randomBytes(3).toString('hex')}-${Date.now()}-1`,
        phone,
        accountReference: accountRef,
        resultCode: known.includes(code) ? code : '0',
        settlesAt: Date.now() + (o.callbackDelayMs ?? 100),
        callbackUrl: String(body.CallBackURL),
      };
      pushes.set(push.checkout, push);
      if (!silentPhones.has(phone)) setTimeout(() => void sendCallback(push), o.callbackDelayMs ?? 100).unref();
      return Promise.resolve({
        status: 200,
        body: {
          MerchantRequestID: push.merchant,
          CheckoutRequestID: push.checkout,
          ResponseCode: '0',
          ResponseDescription: 'Success. Request accepted for processing',
          CustomerMessage: 'Success. Request accepted for processing',
        },
      });
    }
    if (req.path === '/mpesa/stkpushquery/v1/query') {
      if (!passwordValid(body)) return Promise.resolve(error(400, '400.002.02', 'Bad Request - Invalid Password'));
      const push = pushes.get(String(body.CheckoutRequestID));
      if (!push) return Promise.resolve(error(400, '400.002.02', 'Bad Request - Invalid CheckoutRequestID'));
      if (Date.now() < push.settlesAt) return Promise.resolve(error(500, '500.001.1001', 'The transaction is being processed'));
      return Promise.resolve({
        status: 200,
        body: {
          ResponseCode: '0',
          ResponseDescription: 'The service request has been accepted successsfully',
          MerchantRequestID: push.merchant,
          CheckoutRequestID: push.checkout,
          ResultCode: push.resultCode,
          ResultDesc: push.resultCode === '0' ? 'The service request is processed successfully.' : `Result ${push.resultCode}`,
        },
      });
    }
    return Promise.resolve(error(404, '404.001.01', 'Resource not found'));
  });
  return { ...server, calls, pushes, silentPhones };
}
