import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

/** One refund of a payment, made by the appeal that approved it (docs/appeals.md#refunds). */
export class Refund extends Model<InferAttributes<Refund>, InferCreationAttributes<Refund>> {
  declare id: string;
  declare orderId: string;
  declare appealId: string;
  declare amountMinor: string;
  declare createdAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): typeof Refund {
    return Refund.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true },
        orderId: { type: DataTypes.UUID, allowNull: false },
        appealId: { type: DataTypes.UUID, allowNull: false },
        amountMinor: { type: DataTypes.DECIMAL(38, 0), allowNull: false },
        createdAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
      },
      { sequelize, tableName: 'refunds' },
    );
  }
}
