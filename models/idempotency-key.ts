import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

export class IdempotencyKey extends Model<InferAttributes<IdempotencyKey>, InferCreationAttributes<IdempotencyKey>> {
  declare scope: string;
  declare method: string;
  declare path: string;
  declare key: string;
  declare requestHash: string;
  declare state: CreationOptional<'in_progress' | 'completed'>;
  declare responseStatus: CreationOptional<number | null>;
  declare responseHeaders: CreationOptional<Record<string, string> | null>;
  declare responseBody: CreationOptional<string | null>;
  declare lockedAt: CreationOptional<Date>;
  declare createdAt: CreationOptional<Date>;
  declare expiresAt: Date;

  static initModel(sequelize: Sequelize): typeof IdempotencyKey {
    return IdempotencyKey.init(
      {
        scope: { type: DataTypes.TEXT, primaryKey: true },
        method: { type: DataTypes.TEXT, primaryKey: true },
        path: { type: DataTypes.TEXT, primaryKey: true },
        key: { type: DataTypes.TEXT, primaryKey: true },
        requestHash: { type: DataTypes.TEXT, allowNull: false },
        state: { type: DataTypes.TEXT, allowNull: false, defaultValue: 'in_progress' },
        responseStatus: { type: DataTypes.INTEGER, allowNull: true },
        responseHeaders: { type: DataTypes.JSONB, allowNull: true },
        responseBody: { type: DataTypes.TEXT, allowNull: true },
        lockedAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
        createdAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
        expiresAt: { type: DataTypes.DATE, allowNull: false },
      },
      { sequelize, tableName: 'idempotency_keys' },
    );
  }
}
