import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';
import type { ApiKeyMode } from '../domain/api-keys';

/** A merchant's API key (docs/access.md#api-keys): the hash of its secret, never the secret. */
export class ApiKey extends Model<InferAttributes<ApiKey>, InferCreationAttributes<ApiKey>> {
  declare id: string;
  declare userId: string;
  declare name: string;
  declare mode: ApiKeyMode;
  declare prefix: string;
  declare secretHash: Buffer;
  declare scopes: string[];
  declare createdAt: CreationOptional<Date>;
  declare lastUsedAt: CreationOptional<Date | null>;
  declare revokedAt: CreationOptional<Date | null>;
  /** After this the key is refused, like a revoked one; null for a key that does not expire. */
  declare expiresAt: CreationOptional<Date | null>;

  static initModel(sequelize: Sequelize): typeof ApiKey {
    return ApiKey.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true },
        userId: { type: DataTypes.UUID, allowNull: false },
        name: { type: DataTypes.TEXT, allowNull: false },
        mode: { type: DataTypes.TEXT, allowNull: false },
        prefix: { type: DataTypes.TEXT, allowNull: false },
        secretHash: { type: DataTypes.BLOB, allowNull: false },
        scopes: { type: DataTypes.ARRAY(DataTypes.TEXT), allowNull: false },
        createdAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
        lastUsedAt: { type: DataTypes.DATE, allowNull: true },
        revokedAt: { type: DataTypes.DATE, allowNull: true },
        expiresAt: { type: DataTypes.DATE, allowNull: true },
      },
      { sequelize, tableName: 'api_keys' },
    );
  }
}
