import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';
import type { ReviewReason, ScreeningContext, ScreeningVerdict } from '../domain/compliance/screening';

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
  declare entryId: string;
  /** NUMERIC(5,4) as a string: 1 for exact matches, the Jaro-Winkler score for names. */
  declare score: string;
  /** `block`, or `review` with why (`near_threshold`, `initials`, `dropped_name`). */
  declare verdict: CreationOptional<ScreeningVerdict>;
  declare reviewReason: CreationOptional<ReviewReason | null>;
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
        entryId: { type: DataTypes.UUID, allowNull: false },
        score: { type: DataTypes.DECIMAL(5, 4), allowNull: false },
        verdict: { type: DataTypes.TEXT, allowNull: false, defaultValue: 'block' },
        reviewReason: { type: DataTypes.TEXT, allowNull: true },
        createdAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
      },
      { sequelize, tableName: 'screening_hits' },
    );
  }
}
