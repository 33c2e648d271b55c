import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

/** A request Paygate made of a rail (an M-Pesa B2C or STK call…), matched to its asynchronous result. */
export class RailRequest extends Model<InferAttributes<RailRequest>, InferCreationAttributes<RailRequest>> {
  declare id: string;
  declare rail: string;
  declare orderId: string;
  declare kind: string;
  declare providerReference: string;
  declare merchantReference: CreationOptional<string | null>;
  declare status: CreationOptional<string>;
  declare resultCode: CreationOptional<string | null>;
  declare resultDesc: CreationOptional<string | null>;
  declare receipt: CreationOptional<string | null>;
  declare createdAt: CreationOptional<Date>;
  declare resolvedAt: CreationOptional<Date | null>;

  static initModel(sequelize: Sequelize): typeof RailRequest {
    return RailRequest.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true, allowNull: false },
        rail: { type: DataTypes.TEXT, allowNull: false },
        orderId: { type: DataTypes.UUID, allowNull: false },
        kind: { type: DataTypes.TEXT, allowNull: false },
        providerReference: { type: DataTypes.TEXT, allowNull: false },
        merchantReference: { type: DataTypes.TEXT, allowNull: true },
        status: { type: DataTypes.TEXT, defaultValue: 'pending', allowNull: false },
        resultCode: { type: DataTypes.TEXT, allowNull: true },
        resultDesc: { type: DataTypes.TEXT, allowNull: true },
        receipt: { type: DataTypes.TEXT, allowNull: true },
        createdAt: { type: DataTypes.DATE, defaultValue: DataTypes.NOW, allowNull: false },
        resolvedAt: { type: DataTypes.DATE, allowNull: true },
      },
      { sequelize, tableName: 'rail_requests' },
    );
  }
}

/** A status query Paygate sent a rail, matched to its asynchronous answer by conversation id. */
export class RailStatusQuery extends Model<InferAttributes<RailStatusQuery>, InferCreationAttributes<RailStatusQuery>> {
  declare rail: string;
  declare orderId: string;
  declare conversationId: string;
  declare originatorConversationId: string;
  declare createdAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): typeof RailStatusQuery {
    return RailStatusQuery.init(
      {
        rail: { type: DataTypes.TEXT, primaryKey: true, allowNull: false },
        orderId: { type: DataTypes.UUID, allowNull: false },
        conversationId: { type: DataTypes.TEXT, primaryKey: true, allowNull: false },
        originatorConversationId: { type: DataTypes.TEXT, allowNull: false },
        createdAt: { type: DataTypes.DATE, defaultValue: DataTypes.NOW, allowNull: false },
      },
      { sequelize, tableName: 'rail_status_queries' },
    );
  }
}

/** A rail result that arrived for an order already final, or that contradicts it: kept for the operator. */
export class LateRailResult extends Model<InferAttributes<LateRailResult>, InferCreationAttributes<LateRailResult>> {
  declare id: CreationOptional<string>;
  declare orderId: string;
  declare rail: string;
  declare orderStatus: string;
  declare outcome: unknown;
  declare verdict: string;
  declare receivedAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): typeof LateRailResult {
    return LateRailResult.init(
      {
        id: { type: DataTypes.BIGINT, primaryKey: true, autoIncrement: true, allowNull: false },
        orderId: { type: DataTypes.UUID, allowNull: false },
        rail: { type: DataTypes.TEXT, allowNull: false },
        orderStatus: { type: DataTypes.TEXT, allowNull: false },
        outcome: { type: DataTypes.JSONB, allowNull: false },
        verdict: { type: DataTypes.TEXT, allowNull: false },
        receivedAt: { type: DataTypes.DATE, defaultValue: DataTypes.NOW, allowNull: false },
      },
      { sequelize, tableName: 'late_rail_results' },
    );
  }
}
