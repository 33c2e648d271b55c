import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

/** A Kenyan bank in the platform catalogue (refreshed from the curated registry by the jobs process). */
export class Bank extends Model<InferAttributes<Bank>, InferCreationAttributes<Bank>> {
  declare code: string;
  declare name: string;
  declare swiftBic: string | null;
  declare swiftBicConfirmed: boolean;
  declare pesalink: boolean;
  declare source: string;
  /** A DATE column: `YYYY-MM-DD`. */
  declare verifiedOn: string;
  declare active: CreationOptional<boolean>;
  declare firstSeenAt: CreationOptional<Date>;
  declare refreshedAt: CreationOptional<Date>;
  declare deactivatedAt: CreationOptional<Date | null>;

  static initModel(sequelize: Sequelize): typeof Bank {
    return Bank.init(
      {
        code: { type: DataTypes.TEXT, primaryKey: true },
        name: { type: DataTypes.TEXT, allowNull: false },
        swiftBic: { type: DataTypes.TEXT, allowNull: true },
        swiftBicConfirmed: { type: DataTypes.BOOLEAN, allowNull: false },
        pesalink: { type: DataTypes.BOOLEAN, allowNull: false },
        source: { type: DataTypes.TEXT, allowNull: false },
        verifiedOn: { type: DataTypes.DATEONLY, allowNull: false },
        active: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
        firstSeenAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
        refreshedAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
        deactivatedAt: { type: DataTypes.DATE, allowNull: true },
      },
      { sequelize, tableName: 'banks' },
    );
  }
}
