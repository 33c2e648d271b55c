import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';
import type { ReviewReason, ReviewStatus, ScreeningContext, ScreeningVerdict } from '../domain/compliance/screening';

/** A screening that matched a blocklist entry: at registration, KYC submission, ad posting or in a payment. */
export class ScreeningHit extends Model<InferAttributes<ScreeningHit>, InferCreationAttributes<ScreeningHit>> {
  declare id: string;
  declare context: ScreeningContext;
  declare userId: string | null;
  declare orderId: string | null;
  declare depositId: string | null;
  /** What was screened: `email`, `full_name`, `destination.phone` … */
  declare field: string;
  declare screenedValue: string;
  /** The listed entry matched; null for a monitoring review (docs/monitoring.md#holds). */
  declare entryId: string | null;
  /** NUMERIC(5,4) as a string: 1 for exact matches, the Jaro-Winkler score for names; null for a monitoring review. */
  declare score: string | null;
  /** `block`, or `review` with why (`near_threshold`, `initials`, `dropped_name`). */
  declare verdict: CreationOptional<ScreeningVerdict>;
  declare reviewReason: CreationOptional<ReviewReason | null>;
  /** Review hits only: `needs_review` until staff decide (`confirmed`, `cleared`), or `expired`. */
  declare status: CreationOptional<ReviewStatus | null>;
  declare decidedBy: CreationOptional<string | null>;
  declare decidedAt: CreationOptional<Date | null>;
  declare decisionNote: CreationOptional<string | null>;
  /** A monitoring review: the evaluation that raised it. */
  declare evaluationId: CreationOptional<string | null>;
  declare createdAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): typeof ScreeningHit {
    return ScreeningHit.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true },
        context: { type: DataTypes.TEXT, allowNull: false },
        userId: { type: DataTypes.UUID, allowNull: true },
        orderId: { type: DataTypes.UUID, allowNull: true },
        depositId: { type: DataTypes.UUID, allowNull: true },
        field: { type: DataTypes.TEXT, allowNull: false },
        screenedValue: { type: DataTypes.TEXT, allowNull: false },
        entryId: { type: DataTypes.UUID, allowNull: true },
        score: { type: DataTypes.DECIMAL(5, 4), allowNull: true },
        verdict: { type: DataTypes.TEXT, allowNull: false, defaultValue: 'block' },
        reviewReason: { type: DataTypes.TEXT, allowNull: true },
        status: { type: DataTypes.TEXT, allowNull: true },
        decidedBy: { type: DataTypes.UUID, allowNull: true },
        decidedAt: { type: DataTypes.DATE, allowNull: true },
        decisionNote: { type: DataTypes.TEXT, allowNull: true },
        evaluationId: { type: DataTypes.UUID, allowNull: true },
        createdAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
      },
      { sequelize, tableName: 'screening_hits' },
    );
  }
}

/**
 * A decided pair (listed entry, screened value) for one customer: confirmed blocks that customer's next
 * screening of the value, cleared passes it; other customers' screenings of the value are reviewed afresh.
 */
export class ScreeningDecision extends Model<InferAttributes<ScreeningDecision>, InferCreationAttributes<ScreeningDecision>> {
  declare entryId: string;
  declare screenedValue: string;
  declare customerId: string;
  declare decision: 'confirmed' | 'cleared';
  declare hitId: string;
  declare decidedBy: string;
  declare decidedAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): typeof ScreeningDecision {
    return ScreeningDecision.init(
      {
        entryId: { type: DataTypes.UUID, primaryKey: true },
        screenedValue: { type: DataTypes.TEXT, primaryKey: true },
        customerId: { type: DataTypes.UUID, primaryKey: true },
        decision: { type: DataTypes.TEXT, allowNull: false },
        hitId: { type: DataTypes.UUID, allowNull: false },
        decidedBy: { type: DataTypes.UUID, allowNull: false },
        decidedAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
      },
      { sequelize, tableName: 'screening_decisions', timestamps: false },
    );
  }
}
