import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

import type { LedgerKind } from '../domain/ledger';

export class LedgerTransaction extends Model<InferAttributes<LedgerTransaction>, InferCreationAttributes<LedgerTransaction>> {
  declare id: string;
  /** Exactly one of `orderId`, `depositId` and `adId` (a P2P ad's escrow): what the posting is for. */
  declare orderId: string | null;
  declare depositId: string | null;
  declare adId: string | null;
  /** A `refund` posting's refund (its order is set too). */
  declare refundId: string | null;
  /** A `rail_fee` posting's charge (the only subject it has): docs/wallets.md#reconciliation-line-by-line. */
  declare railChargeId: CreationOptional<string | null>;
  /** A bulk payout's own postings (`batch_hold`, `batch_release`): docs/payments.md#bulk-payouts. */
  declare payoutBatchId: CreationOptional<string | null>;
  declare kind: LedgerKind;
  declare currency: string;
  declare createdAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): typeof LedgerTransaction {
    return LedgerTransaction.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true },
        orderId: { type: DataTypes.UUID, allowNull: true },
        depositId: { type: DataTypes.UUID, allowNull: true },
        adId: { type: DataTypes.UUID, allowNull: true },
        refundId: { type: DataTypes.UUID, allowNull: true },
        railChargeId: { type: DataTypes.UUID, allowNull: true },
        payoutBatchId: { type: DataTypes.UUID, allowNull: true },
        kind: { type: DataTypes.TEXT, allowNull: false },
        currency: { type: DataTypes.TEXT, allowNull: false },
        createdAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
      },
      { sequelize, tableName: 'ledger_transactions' },
    );
  }
}

export class LedgerEntry extends Model<InferAttributes<LedgerEntry>, InferCreationAttributes<LedgerEntry>> {
  declare id: CreationOptional<string>;
  declare transactionId: string;
  declare account: string;
  declare currency: string;
  declare direction: 'debit' | 'credit';
  declare amountMinor: string;
  /** The account's balance once this entry applied; written by the database, never by code. */
  declare balanceAfterMinor: CreationOptional<string>;
  declare createdAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): typeof LedgerEntry {
    return LedgerEntry.init(
      {
        id: { type: DataTypes.BIGINT, primaryKey: true, autoIncrement: true },
        transactionId: { type: DataTypes.UUID, allowNull: false },
        account: { type: DataTypes.TEXT, allowNull: false },
        currency: { type: DataTypes.TEXT, allowNull: false },
        direction: { type: DataTypes.TEXT, allowNull: false },
        amountMinor: { type: DataTypes.DECIMAL(38, 0), allowNull: false },
        balanceAfterMinor: { type: DataTypes.DECIMAL(38, 0), allowNull: false },
        createdAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
      },
      { sequelize, tableName: 'ledger_entries' },
    );
  }
}

/**
 * One ledger account's balance (credits − debits, minor units). Only the ledger's trigger writes it, in
 * the transaction of each entry; `wallet:`, `hold:`, `escrow:` and `suspense:` accounts never go below zero.
 */
export class Account extends Model<InferAttributes<Account>, InferCreationAttributes<Account>> {
  declare account: string;
  declare currency: string;
  declare balanceMinor: CreationOptional<string>;
  declare updatedAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): typeof Account {
    return Account.init(
      {
        account: { type: DataTypes.TEXT, primaryKey: true },
        currency: { type: DataTypes.TEXT, primaryKey: true },
        balanceMinor: { type: DataTypes.DECIMAL(38, 0), allowNull: false, defaultValue: '0' },
        updatedAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
      },
      { sequelize, tableName: 'accounts' },
    );
  }
}
