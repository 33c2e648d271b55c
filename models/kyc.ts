import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';
import type { KycIdType, KycStatus } from '../domain/users';

/** A user's KYC submission and the compliance decision on it; one row per user. */
export class KycRecord extends Model<InferAttributes<KycRecord>, InferCreationAttributes<KycRecord>> {
  declare userId: string;
  declare idType: KycIdType;
  declare idNumber: string;
  /** YYYY-MM-DD. */
  declare dateOfBirth: string;
  declare kraPin: string | null;
  declare address: string | null;
  declare submittedAt: Date;
  /** Replaced on every (re)submission; a decision names the one it reviewed. */
  declare submissionId: CreationOptional<string>;
  declare decidedAt: CreationOptional<Date | null>;
  declare decidedBy: CreationOptional<string | null>;
  declare reason: CreationOptional<string | null>;
  declare updatedAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): typeof KycRecord {
    return KycRecord.init(
      {
        userId: { type: DataTypes.UUID, primaryKey: true },
        idType: { type: DataTypes.TEXT, allowNull: false },
        idNumber: { type: DataTypes.TEXT, allowNull: false },
        dateOfBirth: { type: DataTypes.DATEONLY, allowNull: false },
        kraPin: { type: DataTypes.TEXT, allowNull: true },
        address: { type: DataTypes.TEXT, allowNull: true },
        submittedAt: { type: DataTypes.DATE, allowNull: false },
        submissionId: { type: DataTypes.UUID, allowNull: false, defaultValue: DataTypes.UUIDV4 },
        decidedAt: { type: DataTypes.DATE, allowNull: true },
        decidedBy: { type: DataTypes.UUID, allowNull: true },
        reason: { type: DataTypes.TEXT, allowNull: true },
        updatedAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
      },
      { sequelize, tableName: 'kyc_records' },
    );
  }
}

/** One KYC status change: who (null: outside the KYC service), when, from → to, why. Append-only. */
export class KycAuditEntry extends Model<InferAttributes<KycAuditEntry>, InferCreationAttributes<KycAuditEntry>> {
  declare id: CreationOptional<string>;
  declare userId: string;
  declare actorId: string | null;
  declare fromStatus: KycStatus;
  declare toStatus: KycStatus;
  declare reason: string | null;
  declare at: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): typeof KycAuditEntry {
    return KycAuditEntry.init(
      {
        id: { type: DataTypes.BIGINT, primaryKey: true, autoIncrement: true },
        userId: { type: DataTypes.UUID, allowNull: false },
        actorId: { type: DataTypes.UUID, allowNull: true },
        fromStatus: { type: DataTypes.TEXT, allowNull: false },
        toStatus: { type: DataTypes.TEXT, allowNull: false },
        reason: { type: DataTypes.TEXT, allowNull: true },
        at: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
      },
      { sequelize, tableName: 'kyc_audit' },
    );
  }
}
