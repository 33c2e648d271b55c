import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

/** A balance asked of a rail that answers later (M-Pesa's Account Balance), and its answer. */
export class RailBalanceQuery extends Model<InferAttributes<RailBalanceQuery>, InferCreationAttributes<RailBalanceQuery>> {
  declare id: string;
  declare rail: string;
  declare method: string;
  declare conversationId: string;
  declare originatorConversationId: string;
  declare status: CreationOptional<'pending' | 'answered' | 'failed'>;
  declare currency: CreationOptional<string | null>;
  declare balanceMinor: CreationOptional<string | null>;
  declare accounts: CreationOptional<unknown>;
  declare reason: CreationOptional<string | null>;
  declare requestedAt: CreationOptional<Date>;
  declare answeredAt: CreationOptional<Date | null>;

  static initModel(sequelize: Sequelize): typeof RailBalanceQuery {
    return RailBalanceQuery.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true },
        rail: { type: DataTypes.TEXT, allowNull: false },
        method: { type: DataTypes.TEXT, allowNull: false },
        conversationId: { type: DataTypes.TEXT, allowNull: false },
        originatorConversationId: { type: DataTypes.TEXT, allowNull: false },
        status: { type: DataTypes.TEXT, allowNull: false, defaultValue: 'pending' },
        currency: { type: DataTypes.TEXT, allowNull: true },
        balanceMinor: { type: DataTypes.DECIMAL(38, 0), allowNull: true },
        accounts: { type: DataTypes.JSONB, allowNull: true },
        reason: { type: DataTypes.TEXT, allowNull: true },
        requestedAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
        answeredAt: { type: DataTypes.DATE, allowNull: true },
      },
      { sequelize, tableName: 'rail_balance_queries' },
    );
  }
}
