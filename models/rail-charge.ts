import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

/** A charge on a rail's own record, posted once to `expense:rail_fees` (docs/wallets.md#reconciliation-line-by-line). */
export class RailCharge extends Model<InferAttributes<RailCharge>, InferCreationAttributes<RailCharge>> {
  declare id: string;
  declare rail: string;
  declare method: string;
  declare providerReference: string;
  declare currency: string;
  declare amountMinor: string;
  declare description: string;
  declare chargedAt: Date;
  declare createdAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): typeof RailCharge {
    return RailCharge.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true },
        rail: { type: DataTypes.TEXT, allowNull: false },
        method: { type: DataTypes.TEXT, allowNull: false },
        providerReference: { type: DataTypes.TEXT, allowNull: false },
        currency: { type: DataTypes.TEXT, allowNull: false },
        amountMinor: { type: DataTypes.DECIMAL(38, 0), allowNull: false },
        description: { type: DataTypes.TEXT, allowNull: false },
        chargedAt: { type: DataTypes.DATE, allowNull: false },
        createdAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
      },
      { sequelize, tableName: 'rail_charges' },
    );
  }
}
