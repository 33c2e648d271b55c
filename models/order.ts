import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';
import type { BankRoute } from '../domain/discovery/routing';
import type { Destination, OrderEventKind, OrderStatus, PaymentMethod } from '../domain/orders';

export class Order extends Model<InferAttributes<Order>, InferCreationAttributes<Order>> {
  declare id: string;
  declare userId: string;
  declare idempotencyKey: string;
  /** NUMERIC minor units, kept as a string. */
  declare amountMinor: string;
  declare kesEquivalentMinor: string;
  declare currency: string;
  declare method: PaymentMethod;
  declare destination: Destination;
  declare description: string | null;
  declare reference: string | null;
  declare status: CreationOptional<OrderStatus>;
  declare failureCode: CreationOptional<string | null>;
  declare failureReason: CreationOptional<string | null>;
  declare railReference: CreationOptional<string | null>;
  /** The connector the order was submitted on (`sandbox`, `jenga`, `daraja`, `ccxt`); null before submission. */
  declare rail: CreationOptional<string | null>;
  /** The reference the rail sees for the order's transfer, chosen and recorded before it is first sent. */
  declare railClientReference: CreationOptional<string | null>;
  /**
   * What became of the last request sent to the rail: `sending` (a request left and its outcome is not known
   * yet), `refused` (the rail definitely did not take it), `accepted`. Null before any request left.
   */
  declare railSubmission: CreationOptional<'sending' | 'refused' | 'accepted' | null>;
  /** When the first request left for the rail. */
  declare railSentAt: CreationOptional<Date | null>;
  /** Bank transfers: how the money leaves the primary bank (`internal`, `pesalink`, `rtgs`). */
  declare route: CreationOptional<BankRoute | null>;
  declare workflowId: string;
  declare workflowStartedAt: CreationOptional<Date | null>;
  declare limitsCheckedAt: CreationOptional<Date | null>;
  /** When the settle deadline passed with no definite answer from the rail (the order stays `processing`). */
  declare overdueAt: CreationOptional<Date | null>;
  /** Set when screening rejected the order: the blocklist entry it matched, and how closely (0–1). */
  declare screeningEntryId: CreationOptional<string | null>;
  declare screeningScore: CreationOptional<string | null>;
  /** A resubmission approved on appeal: the order it resubmits, and the staff member who approved it. */
  declare resubmittedFrom: CreationOptional<string | null>;
  declare approvedBy: CreationOptional<string | null>;
  /** What approved appeals have refunded so far (minor units); the database keeps it at most `amountMinor`. */
  declare refundedMinor: CreationOptional<string>;
  /** What the payment costs on top of its amount (minor units, the order's currency), fixed at acceptance. */
  declare feeMinor: CreationOptional<string>;
  /** The bulk payout the order pays an item of (its hold comes from the batch's): docs/payments.md#bulk-payouts. */
  declare payoutBatchId: CreationOptional<string | null>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): typeof Order {
    return Order.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true },
        userId: { type: DataTypes.UUID, allowNull: false },
        idempotencyKey: { type: DataTypes.TEXT, allowNull: false },
        amountMinor: { type: DataTypes.DECIMAL(38, 0), allowNull: false },
        kesEquivalentMinor: { type: DataTypes.DECIMAL(38, 0), allowNull: false },
        currency: { type: DataTypes.TEXT, allowNull: false },
        method: { type: DataTypes.TEXT, allowNull: false },
        destination: { type: DataTypes.JSONB, allowNull: false },
        description: { type: DataTypes.TEXT, allowNull: true },
        reference: { type: DataTypes.TEXT, allowNull: true },
        status: { type: DataTypes.TEXT, allowNull: false, defaultValue: 'pending' },
        failureCode: { type: DataTypes.TEXT, allowNull: true },
        failureReason: { type: DataTypes.TEXT, allowNull: true },
        railReference: { type: DataTypes.TEXT, allowNull: true },
        rail: { type: DataTypes.TEXT, allowNull: true },
        railClientReference: { type: DataTypes.TEXT, allowNull: true },
        railSubmission: { type: DataTypes.TEXT, allowNull: true },
        railSentAt: { type: DataTypes.DATE, allowNull: true },
        route: { type: DataTypes.TEXT, allowNull: true },
        workflowId: { type: DataTypes.TEXT, allowNull: false },
        workflowStartedAt: { type: DataTypes.DATE, allowNull: true },
        limitsCheckedAt: { type: DataTypes.DATE, allowNull: true },
        refundedMinor: { type: DataTypes.DECIMAL(38, 0), allowNull: false, defaultValue: '0' },
        feeMinor: { type: DataTypes.DECIMAL(38, 0), allowNull: false, defaultValue: '0' },
        payoutBatchId: { type: DataTypes.UUID, allowNull: true },
        overdueAt: { type: DataTypes.DATE, allowNull: true },
        screeningEntryId: { type: DataTypes.UUID, allowNull: true },
        screeningScore: { type: DataTypes.DECIMAL(5, 4), allowNull: true },
        resubmittedFrom: { type: DataTypes.UUID, allowNull: true },
        approvedBy: { type: DataTypes.UUID, allowNull: true },
        createdAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
        updatedAt: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
      },
      { sequelize, tableName: 'orders' },
    );
  }
}

export class OrderEvent extends Model<InferAttributes<OrderEvent>, InferCreationAttributes<OrderEvent>> {
  declare id: CreationOptional<string>;
  declare orderId: string;
  declare status: OrderEventKind;
  declare detail: string | null;
  declare at: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): typeof OrderEvent {
    return OrderEvent.init(
      {
        id: { type: DataTypes.BIGINT, primaryKey: true, autoIncrement: true },
        orderId: { type: DataTypes.UUID, allowNull: false },
        status: { type: DataTypes.TEXT, allowNull: false },
        detail: { type: DataTypes.TEXT, allowNull: true },
        at: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
      },
      { sequelize, tableName: 'order_events' },
    );
  }
}

/**
 * What a payer's orders of one UTC hour count towards the 24-hour limit, in KES minor units
 * (docs/payments.md#admission): one of the hour's slots, whose sum is the hour's. Kept by the database's trigger on
 * `orders` and read by `order_limit_usage`, never written by the application.
 */
export class OrderLimitUsageHour extends Model<InferAttributes<OrderLimitUsageHour>, InferCreationAttributes<OrderLimitUsageHour>> {
  declare userId: string;
  declare hour: Date;
  /** One of the hour's sums: orders changed at once count on different slots, so none waits for another. */
  declare slot: number;
  /** May be below zero in one slot; only the hour's sum means anything. */
  declare usedMinor: string;

  static initModel(sequelize: Sequelize): typeof OrderLimitUsageHour {
    return OrderLimitUsageHour.init(
      {
        userId: { type: DataTypes.UUID, primaryKey: true },
        hour: { type: DataTypes.DATE, primaryKey: true },
        slot: { type: DataTypes.INTEGER, primaryKey: true },
        usedMinor: { type: DataTypes.DECIMAL(38, 0), allowNull: false },
      },
      { sequelize, tableName: 'order_limit_usage_hours', timestamps: false },
    );
  }
}
