import type { Config } from '../platform/config';
import { exchangeStatus } from '../repositories/catalogue';
import { CcxtTransferConnector } from './ccxt-transfer';
import { DarajaConnector } from './daraja';
import { JengaConnector } from './jenga';
import { SandboxConnector } from './sandbox';
import type { RailConnector, RailMethod } from './types';

export type Connectors = Record<RailMethod, RailConnector>;

/** The connector for each method: the sandbox (default) or the real rail chosen in config (RAIL_*). */
export function createConnectors(cfg: Config): Connectors {
  const sandbox = new SandboxConnector({
    publicBaseUrl: cfg.http.publicBaseUrl,
    callbackSecret: cfg.sandbox.callbackSecret,
    callbackDelayMs: cfg.sandbox.callbackDelayMs,
  });
  const rails = cfg.rails ?? { bank_transfer: 'sandbox', mobile_money: 'sandbox', crypto: 'sandbox' };
  return {
    bank_transfer:
      rails.bank_transfer === 'jenga' ? new JengaConnector({ ...cfg.jenga, primaryBankCode: cfg.discovery.primaryBankCode }) : sandbox,
    mobile_money: rails.mobile_money === 'daraja' ? new DarajaConnector({ ...cfg.daraja, publicBaseUrl: cfg.http.publicBaseUrl }) : sandbox,
    crypto:
      rails.crypto === 'ccxt'
        ? new CcxtTransferConnector({
            ...cfg.ccxt,
            destinationStatus: exchangeStatus,
          })
        : sandbox,
  };
}

export * from './types';
