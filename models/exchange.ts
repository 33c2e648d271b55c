import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';
import type { ExchangeFees, ExchangeSource, ExchangeStatus, ExchangeUrls } from '../domain/discovery/exchanges';

/** A crypto exchange in the platform catalogue (refreshed from ccxt by the jobs process). */
export class Exchange extends Model<InferAttributes<Exchange>, InferCreationAttributes<Exchange>> {
  declare id: string;
  declare name: string;
  declare countries: string[];
  declare urls: ExchangeUrls;
  declare capabilities: string[];
  declare fees: ExchangeFees;
  declare certified: boolean;
  declare pro: boolean;
  declare source: ExchangeSource;
  declare status: CreationOptional<ExchangeStatus>;
  declare checkedAt: CreationOptional<Date | null>;
  declare active: CreationOptional<boolean>;
  declare firstSeenAt: CreationOptional<Date>;
  declare refreshedAt: CreationOptional<Date>;
  declare deactivatedAt: CreationOptional<Date | null>;

  static initModel(sequelize: Sequelize): typeof Exchange {
    return Exchange.init(
      {
        id: { type: DataTypes.TEXT, primaryKey: true },
        name: { type: DataTypes.TEXT, allowNull: false },
        countries: { type: DataTypes.ARRAY(DataTypes.TEXT), allowNull: false },
        urls: { type: DataTypes.JSONB, allowNull: false },
        capabilities: { type: DataTypes.ARRAY(DataTypes.TEXT), allowNull: false },
        fees: { type: DataTypes.JSONB, allowNull: false },
        certified: { type: DataTypes.BOOLEAN, allowNull: false },
        pro: { type: DataTypes.BOOLEAN, allowNull: false },
        source: { type: DataTypes.TEXT, allowNull: false },
        status: { type: DataTypes.TEXT, allowNull: false, defaultValue: 'unknown' },
        checkedAt: { type: DataTypes.DATE, allowNull: true },
        active: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
        firstSeenAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
        refreshedAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
        deactivatedAt: { type: DataTypes.DATE, allowNull: true },
      },
      { sequelize, tableName: 'exchanges' },
    );
  }
}
