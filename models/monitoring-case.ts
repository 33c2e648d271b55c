import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

/** A monitoring case (docs/compliance.md#cases): one customer's alerts, worked by staff, closed by two of them. */
export class MonitoringCase extends Model<InferAttributes<MonitoringCase>, InferCreationAttributes<MonitoringCase>> {
  declare id: string;
  declare customerId: string;
  declare status: CreationOptional<'open' | 'closed'>;
  declare assigneeId: CreationOptional<string | null>;
  declare openedAt: CreationOptional<Date>;
  /** The first staff member's closure, waiting for a second one to confirm it. */
  declare closureRequestedBy: CreationOptional<string | null>;
  declare closureRequestedAt: CreationOptional<Date | null>;
  declare closureOutcome: CreationOptional<'false_positive' | 'reported' | null>;
  declare closureNote: CreationOptional<string | null>;
  declare closedBy: CreationOptional<string | null>;
  declare closedAt: CreationOptional<Date | null>;
  /** The STR a `reported` closure made. */
  declare reportId: CreationOptional<string | null>;

  static initModel(sequelize: Sequelize): typeof MonitoringCase {
    return MonitoringCase.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true },
        customerId: { type: DataTypes.UUID, allowNull: false },
        status: { type: DataTypes.TEXT, allowNull: false, defaultValue: 'open' },
        assigneeId: { type: DataTypes.UUID, allowNull: true },
        openedAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
        closureRequestedBy: { type: DataTypes.UUID, allowNull: true },
        closureRequestedAt: { type: DataTypes.DATE, allowNull: true },
        closureOutcome: { type: DataTypes.TEXT, allowNull: true },
        closureNote: { type: DataTypes.TEXT, allowNull: true },
        closedBy: { type: DataTypes.UUID, allowNull: true },
        closedAt: { type: DataTypes.DATE, allowNull: true },
        reportId: { type: DataTypes.UUID, allowNull: true },
      },
      { sequelize, tableName: 'monitoring_cases', timestamps: false },
    );
  }
}

/** An alert filed into a case: the evaluation, which case it joined, when. Append-only. */
export class MonitoringCaseAlert extends Model<InferAttributes<MonitoringCaseAlert>, InferCreationAttributes<MonitoringCaseAlert>> {
  declare evaluationId: string;
  declare caseId: string;
  declare filedAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): typeof MonitoringCaseAlert {
    return MonitoringCaseAlert.init(
      {
        evaluationId: { type: DataTypes.UUID, primaryKey: true },
        caseId: { type: DataTypes.UUID, allowNull: false },
        filedAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
      },
      { sequelize, tableName: 'monitoring_case_alerts', timestamps: false },
    );
  }
}

/** A staff member's note on a case. Append-only. */
export class MonitoringCaseNote extends Model<InferAttributes<MonitoringCaseNote>, InferCreationAttributes<MonitoringCaseNote>> {
  declare id: string;
  declare caseId: string;
  declare authorId: string;
  declare text: string;
  declare createdAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): typeof MonitoringCaseNote {
    return MonitoringCaseNote.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true },
        caseId: { type: DataTypes.UUID, allowNull: false },
        authorId: { type: DataTypes.UUID, allowNull: false },
        text: { type: DataTypes.TEXT, allowNull: false },
        createdAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
      },
      { sequelize, tableName: 'monitoring_case_notes', updatedAt: false },
    );
  }
}
