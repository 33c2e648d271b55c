import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { startFakeDaraja, type FakeDaraja } from './daraja';
import { startFakeJenga, type FakeJenga } from './jenga';

/** Both provider fakes, and the settings that point Paygate's real connectors at them. */
export interface RailFakes {
  env: Record<string, string>;
  daraja: FakeDaraja;
  jenga: FakeJenga;
  jengaPublicKey: KeyObject;
  close(): Promise<void>;
}

export async function startRailFakes(options: { darajaCallbackDelayMs?: number } = {}): Promise<RailFakes> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const darajaCreds = {
    consumerKey: 'fake-consumer-key',
    consumerSecret: 'fake-consumer-secret',
    shortcode: '174379',
    passkey: 'fake-passkey-0123',
  };
  const jengaCreds = {
    apiKey: 'fake-api-key',
    merchantCode: '4200000000',
    consumerSecret: 'fake-jenga-secret',
    accountNumber: '1100194977404',
  };
  const daraja = await startFakeDaraja({ ...darajaCreds, callbackDelayMs: options.darajaCallbackDelayMs ?? 100 });
  const jenga = await startFakeJenga({ ...jengaCreds, publicKey });
  return {
    daraja,
    jenga,
    jengaPublicKey: publicKey,
    env: {
      RAIL_BANK_TRANSFER: 'jenga',
      RAIL_MOBILE_MONEY: 'daraja',
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
    },
    close: async () => {
      await daraja.close();
      await jenga.close();
    },
  };
}
