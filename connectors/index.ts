import type { Config } from '../platform/config';
import { CcxtTransferConnector } from './ccxt-transfer';
import { DarajaConnector } from './daraja';
import { JengaConnector } from './jenga';
import { SandboxConnector, type SandboxBooks } from './sandbox';
import type {
  BalanceQueries,
  Balances,
  Collections,
  DepositAddresses,
  Holdings,
  PaybillRegistration,
  RailConnector,
  RailMethod,
  ReceivedDeposits,
  SentWithdrawals,
  Statements,
} from './types';

/**
 * The connectors of one process: the rail of each method, and each capability beyond payouts and status
 * queries where the rail configured for it has it (null where it has not: the sandbox keeps no statement).
 */
export interface Connectors extends Readonly<Record<RailMethod, RailConnector>> {
  /** Collections from a payer's phone, on the mobile-money rail. */
  readonly collections: Collections;
  /** The primary bank's balance and statement (Jenga). */
  readonly bankBalance: Balances | null;
  readonly bankStatement: Statements | null;
  /** The exchange account's holdings, deposit addresses and received deposits (ccxt). */
  readonly exchangeHoldings: Holdings | null;
  readonly depositAddresses: DepositAddresses | null;
  readonly receivedDeposits: ReceivedDeposits | null;
  /** The exchange account's own record of its withdrawals (ccxt), for reconciliation. */
  readonly sentWithdrawals: SentWithdrawals | null;
  /** The paybill's URL registration (Daraja). */
  readonly paybill: PaybillRegistration | null;
  /** The mobile-money rail's balance, answered later (Daraja's Account Balance). */
  readonly mobileMoneyBalance: BalanceQueries | null;
}

/** What the connectors are given rather than reach for: they read and write nothing of ours themselves. */
export interface ConnectorPorts {
  /** The sandbox's simulated provider keeps its books through this. */
  sandboxBooks: SandboxBooks;
  /** The catalogue status of a destination exchange (`ok`, `maintenance`, …), null when it is not listed. */
  exchangeStatus: (exchangeId: string) => Promise<string | null>;
}

/** The rail configured for each method; the sandbox where none is. */
export const configuredRails = (cfg: Pick<Config, 'rails'>): Config['rails'] =>
  cfg.rails ?? { bank_transfer: 'sandbox', mobile_money: 'sandbox', crypto: 'sandbox' };

/**
 * The connector for each method: the sandbox (default) or the real rail chosen in config (RAIL_*). Each
 * process builds one registry and passes it on, so the providers' tokens are fetched once per process.
 */
export function createConnectors(cfg: Config, ports: ConnectorPorts): Connectors {
  const sandbox = new SandboxConnector({
    publicBaseUrl: cfg.http.publicBaseUrl,
    callbackSecret: cfg.sandbox.callbackSecret,
    callbackDelayMs: cfg.sandbox.callbackDelayMs,
    books: ports.sandboxBooks,
  });
  const rails = configuredRails(cfg);
  const bank =
    rails.bank_transfer === 'jenga' ? new JengaConnector({ ...cfg.jenga, primaryBankCode: cfg.discovery.primaryBankCode }) : null;
  const mpesa = rails.mobile_money === 'daraja' ? new DarajaConnector({ ...cfg.daraja, publicBaseUrl: cfg.http.publicBaseUrl }) : null;
  const exchange = rails.crypto === 'ccxt' ? new CcxtTransferConnector({ ...cfg.ccxt, destinationStatus: ports.exchangeStatus }) : null;
  return {
    bank_transfer: bank ?? sandbox,
    mobile_money: mpesa ?? sandbox,
    crypto: exchange ?? sandbox,
    collections: mpesa ?? sandbox,
    bankBalance: bank,
    bankStatement: bank,
    exchangeHoldings: exchange,
    depositAddresses: exchange,
    receivedDeposits: exchange,
    sentWithdrawals: exchange,
    paybill: mpesa,
    mobileMoneyBalance: mpesa,
  };
}

export * from './types';
