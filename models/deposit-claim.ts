import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

/**
 * What a rail said arrived that Paygate has not (yet) credited (docs/wallets.md#money-in-is-proven): a paybill
 * confirmation refused, waiting for or not confirmed by Transaction Status, an STK payment naming no request,
 * a bank credit returning one of our payouts. Read and written by `repositories/deposit-claims.ts`.
 */
export class DepositClaim extends Model<InferAttributes<DepositClaim>, InferCreationAttributes<DepositClaim>> {
  declare id: CreationOptional<string>;
  declare channel: 'mpesa_c2b' | 'mpesa_stk' | 'bank_transfer';
  declare status: 'rejected' | 'checking' | 'unconfirmed' | 'credited' | 'returned';
  declare reason: string | null;
  declare providerReference: string | null;
  declare currency: CreationOptional<string>;
  declare amountMinor: string | null;
  declare accountReference: CreationOptional<string>;
  declare payerPhone: string | null;
  declare payerName: string | null;
  declare sourceAddress: string | null;
  declare body: CreationOptional<Record<string, unknown>>;
  declare statusConversationId: string | null;
  declare statusOriginatorConversationId: string | null;
  declare statusQueries: CreationOptional<number>;
  declare nextStatusQueryAt: Date | null;
  declare depositId: string | null;
  declare orderId: string | null;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): typeof DepositClaim {
    return DepositClaim.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true },
        channel: { type: DataTypes.TEXT, allowNull: false },
        status: { type: DataTypes.TEXT, allowNull: false },
        reason: { type: DataTypes.TEXT, allowNull: true },
        providerReference: { type: DataTypes.TEXT, allowNull: true },
        currency: { type: DataTypes.TEXT, allowNull: false, defaultValue: 'KES' },
        amountMinor: { type: DataTypes.DECIMAL(38, 0), allowNull: true },
        accountReference: { type: DataTypes.TEXT, allowNull: false, defaultValue: '' },
        payerPhone: { type: DataTypes.TEXT, allowNull: true },
        payerName: { type: DataTypes.TEXT, allowNull: true },
        sourceAddress: { type: DataTypes.TEXT, allowNull: true },
        body: { type: DataTypes.JSONB, allowNull: false, defaultValue: {} },
        statusConversationId: { type: DataTypes.TEXT, allowNull: true },
        statusOriginatorConversationId: { type: DataTypes.TEXT, allowNull: true },
        statusQueries: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
        nextStatusQueryAt: { type: DataTypes.DATE, allowNull: true },
        depositId: { type: DataTypes.UUID, allowNull: true },
        orderId: { type: DataTypes.UUID, allowNull: true },
        createdAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
        updatedAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
      },
      { sequelize, tableName: 'deposit_claims' },
    );
  }
}

/** The secret in the paybill's callback URLs, one per C2B registration, kept as its hash (docs/wallets.md#money-in-is-proven). */
export class C2bUrlToken extends Model<InferAttributes<C2bUrlToken>, InferCreationAttributes<C2bUrlToken>> {
  declare id: CreationOptional<string>;
  declare tokenHash: string;
  declare createdAt: CreationOptional<Date>;
  declare registeredAt: Date | null;

  static initModel(sequelize: Sequelize): typeof C2bUrlToken {
    return C2bUrlToken.init(
      {
        id: { type: DataTypes.BIGINT, primaryKey: true, autoIncrement: true },
        tokenHash: { type: DataTypes.TEXT, allowNull: false, unique: true },
        createdAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
        registeredAt: { type: DataTypes.DATE, allowNull: true },
      },
      { sequelize, tableName: 'c2b_url_tokens' },
    );
  }
}
