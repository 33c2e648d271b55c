import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

/** A difference between a rail's own record and the ledger (docs/wallets.md#reconciliation-line-by-line). */
export class ReconciliationBreak extends Model<InferAttributes<ReconciliationBreak>, InferCreationAttributes<ReconciliationBreak>> {
  declare id: string;
  declare rail: string;
  declare method: string;
  declare kind: string;
  declare direction: 'in' | 'out';
  declare reference: string;
  declare currency: string;
  declare railAmountMinor: string | null;
  declare ledgerAmountMinor: string | null;
  declare railLines: number;
  declare ledgerLines: number;
  declare day: string;
  declare depositIds: CreationOptional<string[]>;
  declare orderIds: CreationOptional<string[]>;
  declare status: CreationOptional<'open' | 'resolved'>;
  declare foundAt: CreationOptional<Date>;
  declare resolvedBy: CreationOptional<string | null>;
  declare resolvedAt: CreationOptional<Date | null>;
  declare resolutionNote: CreationOptional<string | null>;

  static initModel(sequelize: Sequelize): typeof ReconciliationBreak {
    return ReconciliationBreak.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true },
        rail: { type: DataTypes.TEXT, allowNull: false },
        method: { type: DataTypes.TEXT, allowNull: false },
        kind: { type: DataTypes.TEXT, allowNull: false },
        direction: { type: DataTypes.TEXT, allowNull: false },
        reference: { type: DataTypes.TEXT, allowNull: false },
        currency: { type: DataTypes.TEXT, allowNull: false },
        railAmountMinor: { type: DataTypes.DECIMAL(38, 0), allowNull: true },
        ledgerAmountMinor: { type: DataTypes.DECIMAL(38, 0), allowNull: true },
        railLines: { type: DataTypes.INTEGER, allowNull: false },
        ledgerLines: { type: DataTypes.INTEGER, allowNull: false },
        day: { type: DataTypes.DATEONLY, allowNull: false },
        depositIds: { type: DataTypes.ARRAY(DataTypes.UUID), allowNull: false, defaultValue: [] },
        orderIds: { type: DataTypes.ARRAY(DataTypes.UUID), allowNull: false, defaultValue: [] },
        status: { type: DataTypes.TEXT, allowNull: false, defaultValue: 'open' },
        foundAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
        resolvedBy: { type: DataTypes.UUID, allowNull: true },
        resolvedAt: { type: DataTypes.DATE, allowNull: true },
        resolutionNote: { type: DataTypes.TEXT, allowNull: true },
      },
      { sequelize, tableName: 'reconciliation_breaks' },
    );
  }
}
