import { DataTypes, Model, type CreationOptional, type InferAttributes, type InferCreationAttributes, type Sequelize } from 'sequelize';

/** A P2P ad: an offer to buy or sell an asset for fiat, at a fixed or floating price. */
export class P2pAd extends Model<InferAttributes<P2pAd>, InferCreationAttributes<P2pAd>> {
  declare id: string;
  declare ownerId: string;
  declare side: string;
  declare asset: string;
  declare fiat: string;
  declare priceType: string;
  declare priceMinor: CreationOptional<string | null>;
  declare priceMarginPct: CreationOptional<string | null>;
  declare totalAmountMinor: string;
  declare availableAmountMinor: string;
  declare minOrderMinor: string;
  declare maxOrderMinor: string;
  declare paymentMethods: string[];
  declare terms: CreationOptional<string | null>;
  declare status: CreationOptional<string>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): typeof P2pAd {
    return P2pAd.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true, allowNull: false },
        ownerId: { type: DataTypes.UUID, allowNull: false },
        side: { type: DataTypes.TEXT, allowNull: false },
        asset: { type: DataTypes.TEXT, allowNull: false },
        fiat: { type: DataTypes.TEXT, allowNull: false },
        priceType: { type: DataTypes.TEXT, allowNull: false },
        priceMinor: { type: DataTypes.DECIMAL(38, 0), allowNull: true },
        priceMarginPct: { type: DataTypes.DECIMAL(7, 2), allowNull: true },
        totalAmountMinor: { type: DataTypes.DECIMAL(38, 0), allowNull: false },
        availableAmountMinor: { type: DataTypes.DECIMAL(38, 0), allowNull: false },
        minOrderMinor: { type: DataTypes.DECIMAL(38, 0), allowNull: false },
        maxOrderMinor: { type: DataTypes.DECIMAL(38, 0), allowNull: false },
        paymentMethods: { type: DataTypes.ARRAY(DataTypes.TEXT), allowNull: false },
        terms: { type: DataTypes.TEXT, allowNull: true },
        status: { type: DataTypes.TEXT, defaultValue: 'active', allowNull: false },
        createdAt: { type: DataTypes.DATE, defaultValue: DataTypes.NOW, allowNull: false },
        updatedAt: { type: DataTypes.DATE, defaultValue: DataTypes.NOW, allowNull: false },
      },
      { sequelize, tableName: 'p2p_ads' },
    );
  }
}

/** A P2P trade: the order (a `p2p` payment) against an ad, and where its escrow stands. */
export class P2pTrade extends Model<InferAttributes<P2pTrade>, InferCreationAttributes<P2pTrade>> {
  declare orderId: string;
  declare adId: string;
  declare makerId: string;
  declare takerId: string;
  declare sellerId: string;
  declare buyerId: string;
  declare asset: string;
  declare assetAmountMinor: string;
  declare priceMinor: string;
  declare paymentMethod: string;
  declare escrowState: CreationOptional<string>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): typeof P2pTrade {
    return P2pTrade.init(
      {
        orderId: { type: DataTypes.UUID, primaryKey: true, allowNull: false },
        adId: { type: DataTypes.UUID, allowNull: false },
        makerId: { type: DataTypes.UUID, allowNull: false },
        takerId: { type: DataTypes.UUID, allowNull: false },
        sellerId: { type: DataTypes.UUID, allowNull: false },
        buyerId: { type: DataTypes.UUID, allowNull: false },
        asset: { type: DataTypes.TEXT, allowNull: false },
        assetAmountMinor: { type: DataTypes.DECIMAL(38, 0), allowNull: false },
        priceMinor: { type: DataTypes.DECIMAL(38, 0), allowNull: false },
        paymentMethod: { type: DataTypes.TEXT, allowNull: false },
        escrowState: { type: DataTypes.TEXT, defaultValue: 'none', allowNull: false },
        createdAt: { type: DataTypes.DATE, defaultValue: DataTypes.NOW, allowNull: false },
        updatedAt: { type: DataTypes.DATE, defaultValue: DataTypes.NOW, allowNull: false },
      },
      { sequelize, tableName: 'p2p_trades' },
    );
  }
}

/** One change in an ad's life (posted, edited, paused, closed…), append-only. */
export class P2pAdEvent extends Model<InferAttributes<P2pAdEvent>, InferCreationAttributes<P2pAdEvent>> {
  declare id: string;
  declare adId: string;
  declare ownerId: string;
  declare event: string;
  declare detail: CreationOptional<string | null>;
  declare at: CreationOptional<Date>;

  static initModel(sequelize: Sequelize): typeof P2pAdEvent {
    return P2pAdEvent.init(
      {
        id: { type: DataTypes.UUID, primaryKey: true, allowNull: false },
        adId: { type: DataTypes.UUID, allowNull: false },
        ownerId: { type: DataTypes.UUID, allowNull: false },
        event: { type: DataTypes.TEXT, allowNull: false },
        detail: { type: DataTypes.TEXT, allowNull: true },
        at: { type: DataTypes.DATE, defaultValue: DataTypes.NOW, allowNull: false },
      },
      { sequelize, tableName: 'p2p_ad_events' },
    );
  }
}
