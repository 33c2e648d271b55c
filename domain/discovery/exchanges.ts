/** How the exchange catalogue describes an exchange: the shapes the catalogue, its model and the API share. */

export const EXCHANGE_STATUSES = ['ok', 'maintenance', 'shutdown', 'error', 'unknown'] as const;
export type ExchangeStatus = (typeof EXCHANGE_STATUSES)[number];

export type ExchangeSource = 'ccxt' | 'sandbox';

export interface ExchangeUrls {
  /** The exchange's website. */
  www: string | null;
  /** API documentation. */
  doc: string[];
  /** API base URLs. */
  api: string[];
  /** Fee schedule pages. */
  fees: string[];
  logo: string | null;
}

export interface ExchangeFees {
  /** Maker fee as a fraction of the traded amount (0.001 = 0.1 %); null when ccxt does not say. */
  maker: number | null;
  /** Taker fee as a fraction of the traded amount. */
  taker: number | null;
  /** The fees are a percentage of the amount (rather than a fixed sum). */
  percentage: boolean | null;
  /** The fees depend on the trader's volume tier; `maker`/`taker` are then the base tier. */
  tier_based: boolean | null;
}
