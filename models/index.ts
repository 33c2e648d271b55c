import type { Sequelize } from 'sequelize';
import { database } from '../platform/database';
import { Bank } from './bank';
import { BlocklistEntry } from './blocklist-entry';
import { CatalogueRefresh } from './catalogue-refresh';
import { Exchange } from './exchange';
import { IdempotencyKey } from './idempotency-key';
import { KycAuditEntry, KycRecord } from './kyc';
import { LedgerEntry, LedgerTransaction } from './ledger';
import { Order, OrderEvent } from './order';
import { SandboxTransfer } from './sandbox-transfer';
import { ScreeningHit } from './screening-hit';
import { User } from './user';

export { Bank, CatalogueRefresh, Exchange };
export { BlocklistEntry, KycAuditEntry, KycRecord, ScreeningHit };
export { IdempotencyKey, LedgerEntry, LedgerTransaction, Order, OrderEvent, SandboxTransfer, User };

let initialised: Sequelize | undefined;

/**
 * Bind every model to a Sequelize instance (once) and return it. Without an argument: the instance the
 * models are bound to, binding them to the process's database first if they are not bound yet.
 */
export function models(given?: Sequelize): Sequelize {
  if (!given && initialised) return initialised;
  const sequelize = given ?? database();
  if (initialised === sequelize) return sequelize;
  User.initModel(sequelize);
  Order.initModel(sequelize);
  OrderEvent.initModel(sequelize);
  LedgerTransaction.initModel(sequelize);
  LedgerEntry.initModel(sequelize);
  IdempotencyKey.initModel(sequelize);
  SandboxTransfer.initModel(sequelize);
  Exchange.initModel(sequelize);
  Bank.initModel(sequelize);
  CatalogueRefresh.initModel(sequelize);
  BlocklistEntry.initModel(sequelize);
  ScreeningHit.initModel(sequelize);
  KycRecord.initModel(sequelize);
  KycAuditEntry.initModel(sequelize);
  Order.hasMany(OrderEvent, { foreignKey: 'orderId', as: 'events' });
  LedgerTransaction.hasMany(LedgerEntry, { foreignKey: 'transactionId', as: 'entries' });
  initialised = sequelize;
  return sequelize;
}
