import type { Sequelize } from 'sequelize';
import type { Config } from '../../platform/config';
import { SandboxConnector } from './sandbox';
import type { RailConnector, RailMethod } from './types';

export type Connectors = Record<RailMethod, RailConnector>;

/** The connector for each method. Only the sandbox rails exist so far; real ones plug in here by config. */
export function createConnectors(sequelize: Sequelize, cfg: Config): Connectors {
  const sandbox = new SandboxConnector({
    sequelize,
    callbackSecret: cfg.sandbox.callbackSecret,
    callbackDelayMs: cfg.sandbox.callbackDelayMs,
  });
  return { bank_transfer: sandbox, mobile_money: sandbox, crypto: sandbox };
}

export * from './types';
