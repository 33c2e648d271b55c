import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

/** `awaiting_approval`: held, its workflow not started, until a second staff member approves it (docs/access.md#four-eyes). */
export type PayoutBatchStatus = 'awaiting_approval' | 'running' | 'completed' | 'cancelled';
export type PayoutBatchItemStatus = 'pending' | 'sent' | 'completed' | 'failed' | 'rejected' | 'cancelled';

/** A bulk payout: up to 10,000 items paid from one hold on the payer's wallet (docs/payments.md#bulk-payouts). */
export class PayoutBatch extends Model<InferAttributes<PayoutBatch>, InferCreationAttributes<PayoutBatch>> {
  declare id: string;
  declare userId: string;
  declare idempotencyKey: string;
  declare currency: string;
  declare status: CreationOptional<PayoutBatchStatus>;
  declare itemCount: number;
  /** Invalid items left out of an accepted batch (`skip_invalid`). */
  declare skippedCount: CreationOptional<number>;
  /** What the batch held: the items' amounts and their fees (NUMERIC minor units, as strings). */
  declare totalAmountMinor: string;
  declare totalFeeMinor: string;
  declare workflowId: string;
  declare workflowStartedAt: CreationOptional<Date | null>;
  declare cancelRequestedAt: CreationOptional<Date | null>;
  declare finishedAt: CreationOptional<Date | null>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): typeof PayoutBatch {
    return PayoutBatch.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true },
        userId: { type: DataTypes.UUID, allowNull: false },
        idempotencyKey: { type: DataTypes.TEXT, allowNull: false },
        currency: { type: DataTypes.TEXT, allowNull: false },
        status: { type: DataTypes.TEXT, allowNull: false, defaultValue: 'running' },
        itemCount: { type: DataTypes.INTEGER, allowNull: false },
        skippedCount: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
        totalAmountMinor: { type: DataTypes.DECIMAL(38, 0), allowNull: false },
        totalFeeMinor: { type: DataTypes.DECIMAL(38, 0), allowNull: false },
        workflowId: { type: DataTypes.TEXT, allowNull: false },
        workflowStartedAt: { type: DataTypes.DATE, allowNull: true },
        cancelRequestedAt: { type: DataTypes.DATE, allowNull: true },
        finishedAt: { type: DataTypes.DATE, allowNull: true },
        createdAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
        updatedAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
      },
      { sequelize, tableName: 'payout_batches' },
    );
  }
}

/** One item of a batch: the client's reference, the initiate body, and the order that pays it once sent. */
export class PayoutBatchItem extends Model<InferAttributes<PayoutBatchItem>, InferCreationAttributes<PayoutBatchItem>> {
  declare batchId: string;
  /** 1-based: the item's place in the JSON array, or its line in the CSV (after the header). */
  declare rowNumber: number;
  declare reference: string;
  declare method: string;
  declare amountMinor: string;
  declare feeMinor: string;
  declare body: Record<string, unknown>;
  declare status: CreationOptional<PayoutBatchItemStatus>;
  declare orderId: CreationOptional<string | null>;
  declare failureCode: CreationOptional<string | null>;
  declare updatedAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): typeof PayoutBatchItem {
    return PayoutBatchItem.init(
      {
        batchId: { type: DataTypes.UUID, primaryKey: true },
        rowNumber: { type: DataTypes.INTEGER, primaryKey: true },
        reference: { type: DataTypes.TEXT, allowNull: false },
        method: { type: DataTypes.TEXT, allowNull: false },
        amountMinor: { type: DataTypes.DECIMAL(38, 0), allowNull: false },
        feeMinor: { type: DataTypes.DECIMAL(38, 0), allowNull: false },
        body: { type: DataTypes.JSONB, allowNull: false },
        status: { type: DataTypes.TEXT, allowNull: false, defaultValue: 'pending' },
        orderId: { type: DataTypes.UUID, allowNull: true },
        failureCode: { type: DataTypes.TEXT, allowNull: true },
        updatedAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
      },
      { sequelize, tableName: 'payout_batch_items' },
    );
  }
}
