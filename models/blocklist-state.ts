import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

/** The blocklist's one row of bookkeeping: a generation bumped on every change, so screeners know when to reload. */
export class BlocklistState extends Model<InferAttributes<BlocklistState>, InferCreationAttributes<BlocklistState>> {
  declare id: number;
  declare generation: CreationOptional<string>;
  declare purges: CreationOptional<string>;

  static initModel(sequelize: Sequelize): typeof BlocklistState {
    return BlocklistState.init(
      {
        id: { type: DataTypes.INTEGER, primaryKey: true, allowNull: false },
        generation: { type: DataTypes.BIGINT, defaultValue: 0, allowNull: false },
        purges: { type: DataTypes.BIGINT, defaultValue: 0, allowNull: false },
      },
      { sequelize, tableName: 'blocklist_state' },
    );
  }
}
