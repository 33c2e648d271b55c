import { DataTypes, Model, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

export type CatalogueName = 'exchanges' | 'banks';

/** When a platform catalogue was last refreshed, and what its source knew then. */
export class CatalogueRefresh extends Model<InferAttributes<CatalogueRefresh>, InferCreationAttributes<CatalogueRefresh>> {
  declare catalogue: CatalogueName;
  declare refreshedAt: Date;
  declare activeEntries: number;
  declare deactivatedEntries: number;
  declare durationMs: number;
  /** Exchanges: every capability name ccxt knows, so that a filter on an unknown one can be refused. */
  declare knownCapabilities: string[];

  static initModel(sequelize: Sequelize): typeof CatalogueRefresh {
    return CatalogueRefresh.init(
      {
        catalogue: { type: DataTypes.TEXT, primaryKey: true },
        refreshedAt: { type: DataTypes.DATE, allowNull: false },
        activeEntries: { type: DataTypes.INTEGER, allowNull: false },
        deactivatedEntries: { type: DataTypes.INTEGER, allowNull: false },
        durationMs: { type: DataTypes.INTEGER, allowNull: false },
        knownCapabilities: { type: DataTypes.ARRAY(DataTypes.TEXT), allowNull: false },
      },
      { sequelize, tableName: 'catalogue_refreshes' },
    );
  }
}
