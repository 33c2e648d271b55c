import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';
import type { BlocklistSource, BlocklistType } from '../domain/compliance/normalise';

/** A blocklisted value (docs/compliance.md#blocklist). Unique per (type, match_key); `generation` is stamped by the database. */
export class BlocklistEntry extends Model<InferAttributes<BlocklistEntry>, InferCreationAttributes<BlocklistEntry>> {
  declare id: string;
  declare type: BlocklistType;
  /** Normalised (case, E.164, whitespace). */
  declare value: string;
  /** What screening compares: the value, or a name's tokens in sorted order. */
  declare matchKey: string;
  declare reason: string;
  declare source: BlocklistSource;
  /** The entry's id in its source list (the OFAC `ent_num`). */
  declare externalRef: CreationOptional<string | null>;
  declare createdBy: string | null;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;
  declare expiresAt: Date | null;
  declare generation: CreationOptional<string>;

  static initModel(sequelize: Sequelize): typeof BlocklistEntry {
    return BlocklistEntry.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true },
        type: { type: DataTypes.TEXT, allowNull: false },
        value: { type: DataTypes.TEXT, allowNull: false },
        matchKey: { type: DataTypes.TEXT, allowNull: false },
        reason: { type: DataTypes.TEXT, allowNull: false },
        source: { type: DataTypes.TEXT, allowNull: false },
        externalRef: { type: DataTypes.TEXT, allowNull: true },
        createdBy: { type: DataTypes.UUID, allowNull: true },
        createdAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
        updatedAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
        expiresAt: { type: DataTypes.DATE, allowNull: true },
        generation: { type: DataTypes.BIGINT, allowNull: false, defaultValue: 0 },
      },
      { sequelize, tableName: 'blocklist_entries' },
    );
  }
}
