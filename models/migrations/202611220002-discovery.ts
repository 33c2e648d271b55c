import type { Migration } from '../migrator';

/**
 * The platform catalogue: crypto exchanges (from ccxt) and Kenyan banks (from the curated registry), kept
 * fresh by the jobs process. Rows are never deleted: an entry that disappears from its source is marked
 * inactive, so orders that named it still explain themselves.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    CREATE TABLE exchanges (
      id text PRIMARY KEY,
      name text NOT NULL,
      countries text[] NOT NULL DEFAULT '{}',
      urls jsonb NOT NULL DEFAULT '{}',
      capabilities text[] NOT NULL DEFAULT '{}',
      fees jsonb NOT NULL DEFAULT '{}',
      certified boolean NOT NULL DEFAULT false,
      pro boolean NOT NULL DEFAULT false,
      source text NOT NULL CHECK (source IN ('ccxt', 'sandbox')),
      status text NOT NULL DEFAULT 'unknown' CHECK (status IN ('ok', 'maintenance', 'shutdown', 'error', 'unknown')),
      checked_at timestamptz,
      active boolean NOT NULL DEFAULT true,
      first_seen_at timestamptz NOT NULL DEFAULT now(),
      refreshed_at timestamptz NOT NULL DEFAULT now(),
      deactivated_at timestamptz
    );
    CREATE INDEX exchanges_capabilities ON exchanges USING gin (capabilities);
    CREATE INDEX exchanges_countries ON exchanges USING gin (countries);

    CREATE TABLE banks (
      code text PRIMARY KEY CHECK (code ~ '^[0-9]{2,3}$'),
      name text NOT NULL,
      swift_bic text,
      swift_bic_confirmed boolean NOT NULL DEFAULT false,
      pesalink boolean NOT NULL,
      source text NOT NULL,
      verified_on date NOT NULL,
      active boolean NOT NULL DEFAULT true,
      first_seen_at timestamptz NOT NULL DEFAULT now(),
      refreshed_at timestamptz NOT NULL DEFAULT now(),
      deactivated_at timestamptz
    );

    -- One row per catalogue: when it was last refreshed, and what the source knew then.
    CREATE TABLE catalogue_refreshes (
      catalogue text PRIMARY KEY CHECK (catalogue IN ('exchanges', 'banks')),
      refreshed_at timestamptz NOT NULL,
      active_entries integer NOT NULL,
      deactivated_entries integer NOT NULL DEFAULT 0,
      duration_ms integer NOT NULL,
      known_capabilities text[] NOT NULL DEFAULT '{}'
    );
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query('DROP TABLE IF EXISTS catalogue_refreshes, banks, exchanges');
};
