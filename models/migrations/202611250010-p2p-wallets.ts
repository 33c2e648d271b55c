import type { Migration } from '../migrator';

/**
 * P2P on wallets (docs/p2p.md#escrow). An ad is funded when posted: its escrow (`escrow:<ad_id>`, in the asset for a
 * sell ad, in KES for a buy ad) is posted for the ad itself, so a ledger transaction now belongs to exactly
 * one of an order, a deposit or an ad, once per (ad, kind): `ad_fund` (wallet → escrow) and `ad_return`
 * (escrow → wallet, when the ad closes or fills). A trade settles both legs between wallets in one
 * transaction, once per (order, kind): `trade_fiat` and `trade_asset`, mirrored by `trade_fiat_reverse`
 * and `trade_asset_reverse` when an appeal refunds it. An ad's history also records `edited`.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    ALTER TABLE ledger_transactions ADD COLUMN ad_id uuid REFERENCES p2p_ads (id);
    ALTER TABLE ledger_transactions DROP CONSTRAINT ledger_transactions_one_subject;
    ALTER TABLE ledger_transactions ADD CONSTRAINT ledger_transactions_one_subject
      CHECK (num_nonnulls(order_id, deposit_id, ad_id) = 1);
    ALTER TABLE ledger_transactions ADD CONSTRAINT ledger_transactions_ad_once UNIQUE (ad_id, kind);
    ALTER TABLE ledger_transactions DROP CONSTRAINT ledger_transactions_kind_check;
    ALTER TABLE ledger_transactions ADD CONSTRAINT ledger_transactions_kind_check
      CHECK (kind IN ('hold', 'release', 'settle', 'reverse', 'escrow_lock', 'escrow_release', 'escrow_return',
                      'escrow_reverse', 'deposit', 'deposit_held', 'deposit_released',
                      'ad_fund', 'ad_return', 'trade_fiat', 'trade_asset', 'trade_fiat_reverse', 'trade_asset_reverse'));

    ALTER TABLE p2p_ad_events DROP CONSTRAINT p2p_ad_events_event_check;
    ALTER TABLE p2p_ad_events ADD CONSTRAINT p2p_ad_events_event_check
      CHECK (event IN ('created', 'paused', 'resumed', 'edited', 'filled', 'closed'));
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query(`
    ALTER TABLE p2p_ad_events DROP CONSTRAINT p2p_ad_events_event_check;
    ALTER TABLE p2p_ad_events ADD CONSTRAINT p2p_ad_events_event_check
      CHECK (event IN ('created', 'paused', 'resumed', 'filled', 'closed'));
    ALTER TABLE ledger_transactions DROP CONSTRAINT ledger_transactions_kind_check;
    ALTER TABLE ledger_transactions ADD CONSTRAINT ledger_transactions_kind_check
      CHECK (kind IN ('hold', 'release', 'settle', 'reverse', 'escrow_lock', 'escrow_release', 'escrow_return',
                      'escrow_reverse', 'deposit', 'deposit_held', 'deposit_released'));
    ALTER TABLE ledger_transactions DROP CONSTRAINT ledger_transactions_ad_once;
    ALTER TABLE ledger_transactions DROP CONSTRAINT ledger_transactions_one_subject;
    ALTER TABLE ledger_transactions DROP COLUMN ad_id;
    ALTER TABLE ledger_transactions ADD CONSTRAINT ledger_transactions_one_subject
      CHECK (num_nonnulls(order_id, deposit_id) = 1);
  `);
};
