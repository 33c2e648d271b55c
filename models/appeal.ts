import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

/** An appeal against a completed order, decided by staff within its SLA (workflow `appeal-<id>`). */
export class Appeal extends Model<InferAttributes<Appeal>, InferCreationAttributes<Appeal>> {
  declare id: string;
  declare orderId: string;
  declare reason: string;
  declare description: string;
  declare evidence: CreationOptional<unknown>;
  declare status: CreationOptional<string>;
  declare createdBy: string;
  declare workflowId: string;
  declare slaDeadline: Date;
  declare decidedBy: CreationOptional<string | null>;
  declare decidedAt: CreationOptional<Date | null>;
  declare decisionNote: CreationOptional<string | null>;
  declare resolution: CreationOptional<Record<string, unknown> | null>;
  /** A refund at or above `FOUR_EYES_ABOVE_KES`: its first approver, when, why, and the refund they approved. */
  declare firstApprovedBy: CreationOptional<string | null>;
  declare firstApprovedAt: CreationOptional<Date | null>;
  declare firstApprovalNote: CreationOptional<string | null>;
  declare firstApproval: CreationOptional<Record<string, unknown> | null>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): typeof Appeal {
    return Appeal.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true, allowNull: false },
        orderId: { type: DataTypes.UUID, allowNull: false },
        reason: { type: DataTypes.TEXT, allowNull: false },
        description: { type: DataTypes.TEXT, allowNull: false },
        evidence: { type: DataTypes.JSONB, defaultValue: [], allowNull: false },
        status: { type: DataTypes.TEXT, defaultValue: 'open', allowNull: false },
        createdBy: { type: DataTypes.UUID, allowNull: false },
        workflowId: { type: DataTypes.TEXT, allowNull: false },
        slaDeadline: { type: DataTypes.DATE, allowNull: false },
        decidedBy: { type: DataTypes.UUID, allowNull: true },
        decidedAt: { type: DataTypes.DATE, allowNull: true },
        decisionNote: { type: DataTypes.TEXT, allowNull: true },
        resolution: { type: DataTypes.JSONB, allowNull: true },
        firstApprovedBy: { type: DataTypes.UUID, allowNull: true },
        firstApprovedAt: { type: DataTypes.DATE, allowNull: true },
        firstApprovalNote: { type: DataTypes.TEXT, allowNull: true },
        firstApproval: { type: DataTypes.JSONB, allowNull: true },
        createdAt: { type: DataTypes.DATE, defaultValue: DataTypes.NOW, allowNull: false },
        updatedAt: { type: DataTypes.DATE, defaultValue: DataTypes.NOW, allowNull: false },
      },
      { sequelize, tableName: 'appeals' },
    );
  }
}
