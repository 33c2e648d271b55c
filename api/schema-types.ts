// Types the controllers share, with the constraints tsoa writes into the OpenAPI document and validates.
import type { ApiKeyScope } from '../domain/api-keys';
import type { APPEAL_ACTIONS } from '../domain/appeals/contract';
import type { BLOCKLIST_SOURCES, BLOCKLIST_TYPES } from '../domain/compliance/normalise';
import type { AD_ASSETS, AD_FIATS, AD_PAYMENT_METHODS, AD_SIDES } from '../domain/p2p/ads';
import type { Currency } from '../domain/money';
import type { CryptoAsset } from '../domain/wallets';
import type { ORDER_STATUSES, PAYMENT_METHODS } from '../domain/orders';
import type { KYC_STATUSES } from '../domain/users';

/**
 * A resource id: a UUID (Paygate issues UUIDv7).
 * @pattern ^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$
 * @maxLength 36
 * @example "01a205e7-cb20-7233-b0b2-3ad4a6f91819"
 */
export type Uuid = string;

/** An order's status. */
export type OrderStatusName = (typeof ORDER_STATUSES)[number];

/** How a payment is carried out. */
export type PaymentMethodName = (typeof PAYMENT_METHODS)[number];

/** A user's KYC status. */
export type KycStatusName = (typeof KYC_STATUSES)[number];

/** What a blocklist entry matches. */
export type BlocklistTypeName = (typeof BLOCKLIST_TYPES)[number];

/** Where a blocklist entry comes from. */
export type BlocklistSourceName = (typeof BLOCKLIST_SOURCES)[number];

/** `buy` or `sell`. */
export type AdSideName = (typeof AD_SIDES)[number];

/** A crypto asset traded in P2P ads. */
export type AdAssetName = (typeof AD_ASSETS)[number];

/** The fiat currency of P2P ads. */
export type AdFiatName = (typeof AD_FIATS)[number];

/** How the fiat leg of a P2P trade is paid. */
export type AdPaymentMethodName = (typeof AD_PAYMENT_METHODS)[number];

/** A currency Paygate moves. */
export type CurrencyCode = Currency;

/** What an API key may do: `<area>:read` (GET) or `<area>:write` (anything else). */
export type ApiKeyScopeName = ApiKeyScope;

/** A crypto asset a wallet takes deposits of. */
export type CryptoAssetCode = CryptoAsset;

/**
 * A network's code as ccxt names it, e.g. TRC20, ERC20 or BTC.
 * @pattern ^[A-Z0-9_]{2,20}$
 * @maxLength 20
 * @example "TRC20"
 */
export type NetworkCode = string;

/** What an approved appeal does to its order. */
export type AppealActionName = (typeof APPEAL_ACTIONS)[number];
