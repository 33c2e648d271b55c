import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

/** One version of the monitoring rules (docs/monitoring.md#rules-as-data): parameters, typologies, thresholds. Append-only. */
export class MonitoringRuleSet extends Model<InferAttributes<MonitoringRuleSet>, InferCreationAttributes<MonitoringRuleSet>> {
  declare version: number;
  declare parameters: Record<string, unknown>;
  /** The staff member who wrote it; null for the default stored on first use. */
  declare createdBy: string | null;
  declare createdAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): typeof MonitoringRuleSet {
    return MonitoringRuleSet.init(
      {
        version: { type: DataTypes.INTEGER, primaryKey: true },
        parameters: { type: DataTypes.JSONB, allowNull: false },
        createdBy: { type: DataTypes.UUID, allowNull: true },
        createdAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
      },
      { sequelize, tableName: 'monitoring_rule_sets', updatedAt: false },
    );
  }
}

/** One evaluation of a money movement (docs/monitoring.md#evaluations): each rule's result, each typology's score, the decision. Append-only. */
export class MonitoringEvaluation extends Model<InferAttributes<MonitoringEvaluation>, InferCreationAttributes<MonitoringEvaluation>> {
  declare id: string;
  declare movementKind: 'payout' | 'deposit' | 'p2p_trade' | 'refund' | 'payout_batch';
  declare movementId: string;
  declare customerId: string;
  declare ruleSetVersion: number;
  declare ruleResults: Record<string, unknown>;
  declare typologyScores: Record<string, unknown>;
  declare decision: 'pass' | 'review' | 'refuse';
  declare createdAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): typeof MonitoringEvaluation {
    return MonitoringEvaluation.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true },
        movementKind: { type: DataTypes.TEXT, allowNull: false },
        movementId: { type: DataTypes.TEXT, allowNull: false },
        customerId: { type: DataTypes.UUID, allowNull: false },
        ruleSetVersion: { type: DataTypes.INTEGER, allowNull: false },
        ruleResults: { type: DataTypes.JSONB, allowNull: false },
        typologyScores: { type: DataTypes.JSONB, allowNull: false },
        decision: { type: DataTypes.TEXT, allowNull: false },
        createdAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
      },
      { sequelize, tableName: 'monitoring_evaluations', updatedAt: false },
    );
  }
}

/**
 * How many movements a customer had on one UTC day, as the history windows count them
 * (docs/monitoring.md#history-windows): one of the day's slots, whose sum is the day's count. Kept by the
 * database's triggers on `orders` and `deposits`, never written by the application.
 */
export class MonitoringCustomerDay extends Model<InferAttributes<MonitoringCustomerDay>, InferCreationAttributes<MonitoringCustomerDay>> {
  declare customerId: string;
  /** The UTC day, `YYYY-MM-DD`. */
  declare day: string;
  /** One of the day's counters: movements recorded at once count on different slots, so none waits for another. */
  declare slot: number;
  declare movements: number;

  static initModel(sequelize: Sequelize): typeof MonitoringCustomerDay {
    return MonitoringCustomerDay.init(
      {
        customerId: { type: DataTypes.UUID, primaryKey: true },
        day: { type: DataTypes.DATEONLY, primaryKey: true },
        slot: { type: DataTypes.INTEGER, primaryKey: true },
        movements: { type: DataTypes.INTEGER, allowNull: false },
      },
      { sequelize, tableName: 'monitoring_customer_days', timestamps: false },
    );
  }
}
