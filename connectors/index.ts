import { QueryTypes, type Sequelize } from 'sequelize';
import type { Config } from '../platform/config';
import { CcxtTransferConnector } from './ccxt-transfer';
import { DarajaConnector } from './daraja';
import { JengaConnector } from './jenga';
import { SandboxConnector } from './sandbox';
import type { RailConnector, RailMethod } from './types';

export type Connectors = Record<RailMethod, RailConnector>;

/** The connector for each method: the sandbox (default) or the real rail chosen in config (RAIL_*). */
export function createConnectors(sequelize: Sequelize, cfg: Config): Connectors {
  const sandbox = new SandboxConnector({
    sequelize,
    callbackSecret: cfg.sandbox.callbackSecret,
    callbackDelayMs: cfg.sandbox.callbackDelayMs,
  });
  const rails = cfg.rails ?? { bank_transfer: 'sandbox', mobile_money: 'sandbox', crypto: 'sandbox' };
  return {
    bank_transfer:
      rails.bank_transfer === 'jenga'
        ? new JengaConnector({ sequelize, ...cfg.jenga, primaryBankCode: cfg.discovery.primaryBankCode })
        : sandbox,
    mobile_money:
      rails.mobile_money === 'daraja' ? new DarajaConnector({ sequelize, ...cfg.daraja, publicBaseUrl: cfg.http.publicBaseUrl }) : sandbox,
    crypto:
      rails.crypto === 'ccxt'
        ? new CcxtTransferConnector({
            ...cfg.ccxt,
            destinationStatus: async (exchangeId) => {
              const [row] = await sequelize.query<{ status: string }>('SELECT status FROM exchanges WHERE id = :exchangeId', {
                replacements: { exchangeId },
                type: QueryTypes.SELECT,
              });
              return row?.status ?? null;
            },
          })
        : sandbox,
  };
}

export * from './types';
