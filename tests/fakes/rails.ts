import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { startFakeBinance, type FakeBinance } from './binance';
import { startFakeDaraja, type FakeDaraja } from './daraja';
import { startFakeJenga, type FakeJenga } from './jenga';

/** The provider fakes (Daraja, Jenga, Binance), and the settings that point Paygate's real connectors at them. */
export interface RailFakes {
  env: Record<string, string>;
  daraja: FakeDaraja;
  jenga: FakeJenga;
  binance: FakeBinance;
  jengaPublicKey: KeyObject;
  close(): Promise<void>;
}

/**
 * `fresh`: the accounts of a new deployment, holding nothing and with no history (an empty bank statement, an
 * M-Pesa shortcode and an exchange account at zero), so that everything they hold later came through Paygate's
 * own deployment.
 */
export async function startRailFakes(options: { darajaCallbackDelayMs?: number; fresh?: boolean } = {}): Promise<RailFakes> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const darajaCreds = {
    consumerKey: 'fake-consumer-key',
    consumerSecret: 'fake-consumer-secret',
    shortcode: '174379',
    passkey: 'fake-passkey-0123',
    initiatorName: 'paygate_api',
    // Daraja expects the initiator password encrypted with Safaricom's certificate; the fake compares it as given.
    securityCredential: 'ZmFrZS1lbmNyeXB0ZWQtaW5pdGlhdG9yLXBhc3N3b3Jk',
  };
  const binanceCreds = { apiKey: 'fake-binance-api-key', secret: 'fake-binance-secret-0123456789' };
  const jengaCreds = {
    apiKey: 'fake-api-key',
    merchantCode: '4200000000',
    consumerSecret: 'fake-jenga-secret',
    accountNumber: '1100194977404',
  };
  const fresh = options.fresh === true;
  const daraja = await startFakeDaraja({
    ...darajaCreds,
    callbackDelayMs: options.darajaCallbackDelayMs ?? 100,
    ...(fresh ? { openingFloat: '0.00' } : {}),
  });
  // The bank charges for each transfer it executes, on its own statement: reconciliation posts it to expense:rail_fees.
  const jenga = await startFakeJenga({
    ...jengaCreds,
    publicKey,
    transferCharge: '25.00',
    ...(fresh ? { history: false, openingBalance: '0.00' } : {}),
  });
  const binance = await startFakeBinance({
    ...binanceCreds,
    settleAfterMs: 300,
    balances: fresh ? { USDT: 0, USDC: 0, BTC: 0, ETH: 0 } : { USDC: 1000 },
  });
  return {
    daraja,
    jenga,
    binance,
    jengaPublicKey: publicKey,
    env: {
      RAIL_BANK_TRANSFER: 'jenga',
      RAIL_MOBILE_MONEY: 'daraja',
      RAIL_CRYPTO: 'ccxt',
      JENGA_BASE_URL: jenga.url,
      JENGA_API_KEY: jengaCreds.apiKey,
      JENGA_MERCHANT_CODE: jengaCreds.merchantCode,
      JENGA_CONSUMER_SECRET: jengaCreds.consumerSecret,
      JENGA_ACCOUNT_NUMBER: jengaCreds.accountNumber,
      JENGA_PRIVATE_KEY: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      DARAJA_BASE_URL: daraja.url,
      DARAJA_CONSUMER_KEY: darajaCreds.consumerKey,
      DARAJA_CONSUMER_SECRET: darajaCreds.consumerSecret,
      DARAJA_SHORTCODE: darajaCreds.shortcode,
      DARAJA_PASSKEY: darajaCreds.passkey,
      DARAJA_CALLBACK_SECRET: 'fake-daraja-callback-secret-0123456789',
      DARAJA_B2C_INITIATOR_NAME: darajaCreds.initiatorName,
      DARAJA_B2C_SECURITY_CREDENTIAL: darajaCreds.securityCredential,
      // The fake stands in for Binance's production API (its testnet has no withdrawals): no sandbox mode.
      CCXT_EXCHANGE: 'binance',
      CCXT_API_KEY: binanceCreds.apiKey,
      CCXT_SECRET: binanceCreds.secret,
      CCXT_SANDBOX: 'false',
      CCXT_API_URL: binance.url,
    },
    close: async () => {
      await daraja.close();
      await jenga.close();
      await binance.close();
    },
  };
}
