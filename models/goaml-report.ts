import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

/** A goAML report to the FRC (docs/compliance.md#goaml-reports): the XML as rendered, who made it, what it covers. Append-only. */
export class GoamlReport extends Model<InferAttributes<GoamlReport>, InferCreationAttributes<GoamlReport>> {
  declare id: string;
  declare kind: 'CTR' | 'STR';
  /** The period a CTR covers (`to` exclusive); null for an STR. */
  declare periodFrom: Date | null;
  declare periodTo: Date | null;
  declare createdBy: string;
  declare createdAt: CreationOptional<Date>;
  declare transactionCount: number;
  /** NUMERIC KES minor units, kept as a string. */
  declare totalKesMinor: string;
  declare thresholdKesMinor: string | null;
  declare xml: string;

  static initModel(sequelize: Sequelize): typeof GoamlReport {
    return GoamlReport.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true },
        kind: { type: DataTypes.TEXT, allowNull: false },
        periodFrom: { type: DataTypes.DATE, allowNull: true },
        periodTo: { type: DataTypes.DATE, allowNull: true },
        createdBy: { type: DataTypes.UUID, allowNull: false },
        createdAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
        transactionCount: { type: DataTypes.INTEGER, allowNull: false },
        totalKesMinor: { type: DataTypes.DECIMAL(38, 0), allowNull: false },
        thresholdKesMinor: { type: DataTypes.DECIMAL(38, 0), allowNull: true },
        xml: { type: DataTypes.TEXT, allowNull: false },
      },
      { sequelize, tableName: 'goaml_reports', timestamps: false },
    );
  }
}
