import {
  DataTypes,
  Model,
  literal,
  type CreationOptional,
  type InferAttributes,
  type InferCreationAttributes,
  type Sequelize,
} from 'sequelize';
import type { DepositChannel, DepositStatus } from '../domain/wallets';

/** Money in, one row per provider transaction (docs/wallets.md#money-in). Read and written by `repositories/deposits.ts`. */
export class Deposit extends Model<InferAttributes<Deposit>, InferCreationAttributes<Deposit>> {
  declare id: CreationOptional<string>;
  /** The wallet's owner; null while the deposit is unmatched. */
  declare userId: string | null;
  declare channel: DepositChannel;
  /** The connector it came through: `sandbox`, `daraja`, `jenga`, `ccxt`. */
  declare rail: string;
  declare currency: string;
  declare amountMinor: string;
  declare status: DepositStatus;
  /** The provider's own transaction id: M-Pesa `TransID` or receipt, bank reference, txid. */
  declare providerReference: string | null;
  /** Which output of that transaction (a crypto deposit's address and memo); empty for the other channels. */
  declare providerOutput: CreationOptional<string>;
  /** The rail's id of the request Paygate made (an STK Push's CheckoutRequestID), while it is awaited. */
  declare railReference: string | null;
  /** The deposit reference the payer quoted, as received. */
  declare quotedReference: string | null;
  declare payerPhone: string | null;
  declare payerName: string | null;
  declare payerAddress: string | null;
  declare failureCode: string | null;
  declare failureReason: string | null;
  declare assignedBy: string | null;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): typeof Deposit {
    return Deposit.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true, defaultValue: literal('paygate_uuid_v7()') },
        userId: { type: DataTypes.UUID, allowNull: true },
        channel: { type: DataTypes.TEXT, allowNull: false },
        rail: { type: DataTypes.TEXT, allowNull: false },
        currency: { type: DataTypes.TEXT, allowNull: false },
        amountMinor: { type: DataTypes.DECIMAL(38, 0), allowNull: false },
        status: { type: DataTypes.TEXT, allowNull: false },
        providerReference: { type: DataTypes.TEXT, allowNull: true },
        providerOutput: { type: DataTypes.TEXT, allowNull: false, defaultValue: '' },
        railReference: { type: DataTypes.TEXT, allowNull: true },
        quotedReference: { type: DataTypes.TEXT, allowNull: true },
        payerPhone: { type: DataTypes.TEXT, allowNull: true },
        payerName: { type: DataTypes.TEXT, allowNull: true },
        payerAddress: { type: DataTypes.TEXT, allowNull: true },
        failureCode: { type: DataTypes.TEXT, allowNull: true },
        failureReason: { type: DataTypes.TEXT, allowNull: true },
        assignedBy: { type: DataTypes.UUID, allowNull: true },
        createdAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
        updatedAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
      },
      { sequelize, tableName: 'deposits' },
    );
  }
}
