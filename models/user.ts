import {
  DataTypes,
  Model,
  literal,
  type CreationOptional,
  type InferAttributes,
  type InferCreationAttributes,
  type Sequelize,
} from 'sequelize';

import type { KycStatus, Role } from '../domain/users';

export class User extends Model<InferAttributes<User>, InferCreationAttributes<User>> {
  declare id: string;
  declare email: string;
  declare passwordHash: string;
  declare fullName: string;
  declare phone: string | null;
  declare roles: CreationOptional<Role[]>;
  declare kycStatus: CreationOptional<KycStatus>;
  /** What the user quotes when paying in (paybill account number, bank narrative); made by the database. */
  declare depositReference: CreationOptional<string>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): typeof User {
    return User.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true },
        email: { type: DataTypes.TEXT, allowNull: false },
        passwordHash: { type: DataTypes.TEXT, allowNull: false },
        fullName: { type: DataTypes.TEXT, allowNull: false },
        phone: { type: DataTypes.TEXT, allowNull: true },
        roles: { type: DataTypes.ARRAY(DataTypes.TEXT), allowNull: false, defaultValue: ['user'] },
        kycStatus: { type: DataTypes.TEXT, allowNull: false, defaultValue: 'unverified' },
        depositReference: { type: DataTypes.TEXT, allowNull: false, defaultValue: literal('paygate_deposit_reference()') },
        createdAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
        updatedAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
      },
      { sequelize, tableName: 'users' },
    );
  }
}
