import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

/** What the simulated provider behind the sandbox connectors remembers about each transfer. */
export class SandboxTransfer extends Model<InferAttributes<SandboxTransfer>, InferCreationAttributes<SandboxTransfer>> {
  declare id: string;
  declare idempotencyKey: string;
  declare method: string;
  declare reference: string;
  declare request: Record<string, unknown>;
  declare outcome: 'succeeded' | 'failed';
  declare failureCode: string | null;
  declare providerCode: string | null;
  declare sendsCallback: boolean;
  declare settlesAt: Date;
  declare submissions: CreationOptional<number>;
  declare callbackSentAt: CreationOptional<Date | null>;
  declare createdAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): typeof SandboxTransfer {
    return SandboxTransfer.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true },
        idempotencyKey: { type: DataTypes.TEXT, allowNull: false, unique: true },
        method: { type: DataTypes.TEXT, allowNull: false },
        reference: { type: DataTypes.TEXT, allowNull: false, unique: true },
        request: { type: DataTypes.JSONB, allowNull: false },
        outcome: { type: DataTypes.TEXT, allowNull: false },
        failureCode: { type: DataTypes.TEXT, allowNull: true },
        providerCode: { type: DataTypes.TEXT, allowNull: true },
        sendsCallback: { type: DataTypes.BOOLEAN, allowNull: false },
        settlesAt: { type: DataTypes.DATE, allowNull: false },
        submissions: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 1 },
        callbackSentAt: { type: DataTypes.DATE, allowNull: true },
        createdAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
      },
      { sequelize, tableName: 'sandbox_transfers' },
    );
  }
}
