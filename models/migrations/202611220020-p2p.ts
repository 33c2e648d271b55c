import type { Migration } from '../migrator';

/**
 * P2P ads, trades and ad events (docs/p2p.md#ads), the escrow ledger kinds, and appeals (docs/appeals.md#opening-an-appeal).
 *
 * Amounts are minor units: `total_amount_minor` and `available_amount_minor` in the ad's asset, prices,
 * `min_order_minor` and `max_order_minor` in the fiat (KES cents; a price is cents per whole asset unit).
 * `available_amount_minor` can never go below zero: the escrow lock is one conditional UPDATE, and the
 * CHECK below catches anything else.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    CREATE TABLE p2p_ads (
      id uuid PRIMARY KEY,
      owner_id uuid NOT NULL REFERENCES users (id),
      side text NOT NULL CHECK (side IN ('buy', 'sell')),
      asset text NOT NULL CHECK (asset IN ('USDT', 'BTC', 'ETH', 'USDC')),
      fiat text NOT NULL CHECK (fiat = 'KES'),
      price_type text NOT NULL CHECK (price_type IN ('fixed', 'floating')),
      price_minor numeric(38, 0) CHECK (price_minor > 0),
      price_margin_pct numeric(7, 2) CHECK (price_margin_pct > -100 AND price_margin_pct < 1000),
      total_amount_minor numeric(38, 0) NOT NULL CHECK (total_amount_minor > 0),
      available_amount_minor numeric(38, 0) NOT NULL,
      min_order_minor numeric(38, 0) NOT NULL CHECK (min_order_minor > 0),
      max_order_minor numeric(38, 0) NOT NULL,
      payment_methods text[] NOT NULL CHECK (cardinality(payment_methods) > 0
        AND payment_methods <@ ARRAY['mpesa', 'bank_transfer', 'airtel_money']),
      terms text,
      status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused', 'closed')),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT p2p_ads_available_in_range CHECK (available_amount_minor >= 0 AND available_amount_minor <= total_amount_minor),
      CONSTRAINT p2p_ads_limits CHECK (min_order_minor <= max_order_minor),
      CONSTRAINT p2p_ads_price CHECK ((price_type = 'fixed' AND price_minor IS NOT NULL AND price_margin_pct IS NULL)
        OR (price_type = 'floating' AND price_minor IS NULL AND price_margin_pct IS NOT NULL))
    );
    CREATE INDEX p2p_ads_listing ON p2p_ads (side, asset, status);
    CREATE INDEX p2p_ads_owner ON p2p_ads (owner_id, id);

    CREATE TABLE p2p_trades (
      order_id uuid PRIMARY KEY REFERENCES orders (id),
      ad_id uuid NOT NULL REFERENCES p2p_ads (id),
      maker_id uuid NOT NULL REFERENCES users (id),
      taker_id uuid NOT NULL REFERENCES users (id),
      seller_id uuid NOT NULL REFERENCES users (id),
      buyer_id uuid NOT NULL REFERENCES users (id),
      asset text NOT NULL,
      asset_amount_minor numeric(38, 0) NOT NULL CHECK (asset_amount_minor > 0),
      price_minor numeric(38, 0) NOT NULL CHECK (price_minor > 0),
      payment_method text NOT NULL,
      escrow_state text NOT NULL DEFAULT 'none' CHECK (escrow_state IN ('none', 'locked', 'released', 'returned', 'refused')),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX p2p_trades_maker ON p2p_trades (maker_id, order_id);
    CREATE INDEX p2p_trades_taker ON p2p_trades (taker_id, order_id);
    CREATE INDEX p2p_trades_ad ON p2p_trades (ad_id);

    CREATE TABLE p2p_ad_events (
      id uuid PRIMARY KEY,
      ad_id uuid NOT NULL REFERENCES p2p_ads (id),
      owner_id uuid NOT NULL REFERENCES users (id),
      event text NOT NULL CHECK (event IN ('created', 'paused', 'resumed', 'filled', 'closed')),
      detail text,
      at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX p2p_ad_events_owner ON p2p_ad_events (owner_id, id);

    -- The asset leg of a trade: escrow locked from the seller, released to the buyer or returned, and
    -- the mirror of a release when a completed trade is refunded.
    ALTER TABLE ledger_transactions DROP CONSTRAINT ledger_transactions_kind_check;
    ALTER TABLE ledger_transactions ADD CONSTRAINT ledger_transactions_kind_check
      CHECK (kind IN ('hold', 'release', 'settle', 'reverse', 'escrow_lock', 'escrow_release', 'escrow_return', 'escrow_reverse'));

    CREATE TABLE appeals (
      id uuid PRIMARY KEY,
      order_id uuid NOT NULL REFERENCES orders (id),
      reason text NOT NULL
        CHECK (reason IN ('payment_not_received', 'wrong_amount', 'unauthorized', 'compliance_rejection', 'other')),
      description text NOT NULL,
      evidence jsonb NOT NULL DEFAULT '[]'::jsonb,
      status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'approved', 'rejected', 'expired')),
      created_by uuid NOT NULL REFERENCES users (id),
      workflow_id text NOT NULL,
      sla_deadline timestamptz NOT NULL,
      decided_by uuid REFERENCES users (id),
      decided_at timestamptz,
      decision_note text,
      resolution jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    -- One open appeal per order.
    CREATE UNIQUE INDEX appeals_one_open_per_order ON appeals (order_id) WHERE status = 'open';
    CREATE INDEX appeals_created_by ON appeals (created_by, id);

    -- A payment resubmitted by an approved appeal records where it came from and who approved it.
    ALTER TABLE orders ADD COLUMN resubmitted_from uuid REFERENCES orders (id);
    ALTER TABLE orders ADD COLUMN approved_by uuid REFERENCES users (id);
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query(`
    ALTER TABLE orders DROP COLUMN IF EXISTS approved_by, DROP COLUMN IF EXISTS resubmitted_from;
    DROP TABLE IF EXISTS appeals, p2p_ad_events, p2p_trades, p2p_ads;
    ALTER TABLE ledger_transactions DROP CONSTRAINT ledger_transactions_kind_check;
    ALTER TABLE ledger_transactions ADD CONSTRAINT ledger_transactions_kind_check
      CHECK (kind IN ('hold', 'release', 'settle', 'reverse'));
  `);
};
