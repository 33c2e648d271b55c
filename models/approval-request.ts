import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

/** A money-moving staff action waiting for (or given) a second staff member's approval (docs/access.md#four-eyes). */
export class ApprovalRequest extends Model<InferAttributes<ApprovalRequest>, InferCreationAttributes<ApprovalRequest>> {
  declare id: string;
  declare kind: string;
  declare subjectId: string;
  declare currency: string;
  declare amountMinor: string;
  declare kesEquivalentMinor: string;
  declare payload: Record<string, unknown>;
  declare status: CreationOptional<'pending' | 'approved' | 'rejected'>;
  declare requestedBy: string;
  declare requestedAt: CreationOptional<Date>;
  declare decidedBy: CreationOptional<string | null>;
  declare decidedAt: CreationOptional<Date | null>;
  declare decisionNote: CreationOptional<string | null>;
  declare result: CreationOptional<Record<string, unknown> | null>;

  static initModel(sequelize: Sequelize): typeof ApprovalRequest {
    return ApprovalRequest.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true },
        kind: { type: DataTypes.TEXT, allowNull: false },
        subjectId: { type: DataTypes.TEXT, allowNull: false },
        currency: { type: DataTypes.TEXT, allowNull: false },
        amountMinor: { type: DataTypes.DECIMAL(38, 0), allowNull: false },
        kesEquivalentMinor: { type: DataTypes.DECIMAL(38, 0), allowNull: false },
        payload: { type: DataTypes.JSONB, allowNull: false, defaultValue: {} },
        status: { type: DataTypes.TEXT, allowNull: false, defaultValue: 'pending' },
        requestedBy: { type: DataTypes.UUID, allowNull: false },
        requestedAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
        decidedBy: { type: DataTypes.UUID, allowNull: true },
        decidedAt: { type: DataTypes.DATE, allowNull: true },
        decisionNote: { type: DataTypes.TEXT, allowNull: true },
        result: { type: DataTypes.JSONB, allowNull: true },
      },
      { sequelize, tableName: 'approval_requests' },
    );
  }
}
