import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

/** One staff action in the audit trail (docs/compliance.md#audit-trail): who, when, what, before and after. Append-only. */
export class AuditEntry extends Model<InferAttributes<AuditEntry>, InferCreationAttributes<AuditEntry>> {
  declare id: string;
  declare occurredAt: CreationOptional<Date>;
  /** Null only for an operator's command-line action (`credentialKind` `operator`). */
  declare actorId: string | null;
  declare actorRoles: string[];
  declare credentialKind: 'login' | 'api_key' | 'operator';
  declare credentialId: string | null;
  declare action: string;
  declare subjectType: string;
  declare subjectId: string;
  declare before: Record<string, unknown> | null;
  declare after: Record<string, unknown> | null;
  declare requestId: string | null;

  static initModel(sequelize: Sequelize): typeof AuditEntry {
    return AuditEntry.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true },
        occurredAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
        actorId: { type: DataTypes.UUID, allowNull: true },
        actorRoles: { type: DataTypes.ARRAY(DataTypes.TEXT), allowNull: false, defaultValue: [] },
        credentialKind: { type: DataTypes.TEXT, allowNull: false },
        credentialId: { type: DataTypes.TEXT, allowNull: true },
        action: { type: DataTypes.TEXT, allowNull: false },
        subjectType: { type: DataTypes.TEXT, allowNull: false },
        subjectId: { type: DataTypes.TEXT, allowNull: false },
        before: { type: DataTypes.JSONB, allowNull: true },
        after: { type: DataTypes.JSONB, allowNull: true },
        requestId: { type: DataTypes.TEXT, allowNull: true },
      },
      { sequelize, tableName: 'audit_entries' },
    );
  }
}
