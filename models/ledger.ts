import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

import type { LedgerKind } from '../domain/ledger';

export class LedgerTransaction extends Model<InferAttributes<LedgerTransaction>, InferCreationAttributes<LedgerTransaction>> {
  declare id: string;
  declare orderId: string;
  declare kind: LedgerKind;
  declare currency: string;
  declare createdAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): typeof LedgerTransaction {
    return LedgerTransaction.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true },
        orderId: { type: DataTypes.UUID, allowNull: false },
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
        createdAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
      },
      { sequelize, tableName: 'ledger_entries' },
    );
  }
}
