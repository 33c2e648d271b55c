import {
  DataTypes,
  Model,
  literal,
  type CreationOptional,
  type InferAttributes,
  type InferCreationAttributes,
  type Sequelize,
} from 'sequelize';

/** A URL a user registered to receive signed event notifications. */
export class WebhookEndpoint extends Model<InferAttributes<WebhookEndpoint>, InferCreationAttributes<WebhookEndpoint>> {
  declare id: string;
  declare userId: string;
  declare url: string;
  declare secret: string;
  declare description: CreationOptional<string | null>;
  declare enabled: CreationOptional<boolean>;
  declare createdAt: CreationOptional<Date>;
  declare disabledAt: CreationOptional<Date | null>;

  static initModel(sequelize: Sequelize): typeof WebhookEndpoint {
    return WebhookEndpoint.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true, allowNull: false },
        userId: { type: DataTypes.UUID, allowNull: false },
        url: { type: DataTypes.TEXT, allowNull: false },
        secret: { type: DataTypes.TEXT, allowNull: false },
        description: { type: DataTypes.TEXT, allowNull: true },
        enabled: { type: DataTypes.BOOLEAN, defaultValue: true, allowNull: false },
        createdAt: { type: DataTypes.DATE, defaultValue: DataTypes.NOW, allowNull: false },
        disabledAt: { type: DataTypes.DATE, allowNull: true },
      },
      { sequelize, tableName: 'webhook_endpoints' },
    );
  }
}

/** An event to notify, fanned out to the owner's endpoints as deliveries. */
export class WebhookEvent extends Model<InferAttributes<WebhookEvent>, InferCreationAttributes<WebhookEvent>> {
  declare id: CreationOptional<string>;
  declare type: string;
  declare userId: string;
  declare orderId: string | null;
  declare depositId: string | null;
  declare payload: unknown;
  declare createdAt: CreationOptional<Date>;
  declare dispatchedAt: CreationOptional<Date | null>;

  static initModel(sequelize: Sequelize): typeof WebhookEvent {
    return WebhookEvent.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true, defaultValue: literal('paygate_uuid_v7()'), allowNull: false },
        type: { type: DataTypes.TEXT, allowNull: false },
        userId: { type: DataTypes.UUID, allowNull: false },
        orderId: { type: DataTypes.UUID, allowNull: true },
        depositId: { type: DataTypes.UUID, allowNull: true },
        payload: { type: DataTypes.JSONB, allowNull: false },
        createdAt: { type: DataTypes.DATE, defaultValue: DataTypes.NOW, allowNull: false },
        dispatchedAt: { type: DataTypes.DATE, allowNull: true },
      },
      { sequelize, tableName: 'webhook_events' },
    );
  }
}

/** One event's delivery to one endpoint: attempts, lease and outcome. */
export class WebhookDelivery extends Model<InferAttributes<WebhookDelivery>, InferCreationAttributes<WebhookDelivery>> {
  declare id: CreationOptional<string>;
  declare eventId: string;
  declare endpointId: string;
  declare status: CreationOptional<string>;
  declare attempts: CreationOptional<number>;
  declare lastStatusCode: CreationOptional<number | null>;
  declare lastError: CreationOptional<string | null>;
  declare attemptLog: CreationOptional<unknown>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;
  declare deliveredAt: CreationOptional<Date | null>;
  declare leasedUntil: CreationOptional<Date | null>;
  declare nextAttemptAt: CreationOptional<Date>;
  /** How many times it was sent again on request (bounded by WEBHOOK_MAX_MANUAL_RETRIES). */
  declare manualRetries: CreationOptional<number>;

  static initModel(sequelize: Sequelize): typeof WebhookDelivery {
    return WebhookDelivery.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true, defaultValue: literal('paygate_uuid_v7()'), allowNull: false },
        eventId: { type: DataTypes.UUID, allowNull: false },
        endpointId: { type: DataTypes.UUID, allowNull: false },
        status: { type: DataTypes.TEXT, defaultValue: 'pending', allowNull: false },
        attempts: { type: DataTypes.INTEGER, defaultValue: 0, allowNull: false },
        lastStatusCode: { type: DataTypes.INTEGER, allowNull: true },
        lastError: { type: DataTypes.TEXT, allowNull: true },
        attemptLog: { type: DataTypes.JSONB, defaultValue: [], allowNull: false },
        createdAt: { type: DataTypes.DATE, defaultValue: DataTypes.NOW, allowNull: false },
        updatedAt: { type: DataTypes.DATE, defaultValue: DataTypes.NOW, allowNull: false },
        deliveredAt: { type: DataTypes.DATE, allowNull: true },
        leasedUntil: { type: DataTypes.DATE, allowNull: true },
        nextAttemptAt: { type: DataTypes.DATE, defaultValue: DataTypes.NOW, allowNull: false },
        manualRetries: { type: DataTypes.INTEGER, defaultValue: 0, allowNull: false },
      },
      { sequelize, tableName: 'webhook_deliveries' },
    );
  }
}
