import type { Migration } from '../migrator';

/**
 * Signed webhooks fed by a transactional outbox, and the provider-side requests of the real rails.
 *
 * Every row inserted into `order_events` (whichever code path moved the order) adds a `webhook_events`
 * row through a trigger, in the same transaction: a status change is never lost and never invented by a
 * rolled-back transaction. The jobs process fans events out to `webhook_deliveries` and sends them.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    CREATE FUNCTION paygate_uuid_v7() RETURNS uuid LANGUAGE sql VOLATILE AS $$
      SELECT encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
               PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
               FROM 1 FOR 6), 52, 1), 53, 1), 'hex')::uuid
    $$;

    CREATE TABLE webhook_endpoints (
      id uuid PRIMARY KEY,
      user_id uuid NOT NULL REFERENCES users (id),
      url text NOT NULL,
      secret text NOT NULL,
      description text,
      enabled boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL DEFAULT now(),
      disabled_at timestamptz
    );
    CREATE INDEX webhook_endpoints_user ON webhook_endpoints (user_id) WHERE enabled;

    CREATE TABLE webhook_events (
      id uuid PRIMARY KEY DEFAULT paygate_uuid_v7(),
      type text NOT NULL,
      user_id uuid NOT NULL,
      order_id uuid NOT NULL,
      payload jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      dispatched_at timestamptz
    );
    CREATE INDEX webhook_events_undispatched ON webhook_events (created_at) WHERE dispatched_at IS NULL;

    CREATE TABLE webhook_deliveries (
      id uuid PRIMARY KEY DEFAULT paygate_uuid_v7(),
      event_id uuid NOT NULL REFERENCES webhook_events (id),
      endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id),
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      last_status_code integer,
      last_error text,
      attempt_log jsonb NOT NULL DEFAULT '[]'::jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      delivered_at timestamptz,
      UNIQUE (event_id, endpoint_id)
    );
    CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (created_at) WHERE status = 'pending';
    CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, id);

    CREATE FUNCTION paygate_order_event_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO webhook_events (type, user_id, order_id, payload)
      SELECT 'order.status_changed', o.user_id, o.id,
             jsonb_build_object(
               'order_id', o.id, 'status', NEW.status, 'detail', NEW.detail, 'at', NEW.at,
               'failure_code', CASE WHEN NEW.status IN ('failed', 'rejected') THEN o.failure_code END,
               'failure_reason', CASE WHEN NEW.status IN ('failed', 'rejected') THEN o.failure_reason END,
               'rail_reference', o.rail_reference)
        FROM orders o WHERE o.id = NEW.order_id;
      RETURN NULL;
    END $$;
    CREATE TRIGGER order_events_outbox AFTER INSERT ON order_events
      FOR EACH ROW EXECUTE FUNCTION paygate_order_event_outbox();

    CREATE TABLE rail_requests (
      id uuid PRIMARY KEY,
      rail text NOT NULL,
      order_id uuid NOT NULL,
      kind text NOT NULL,
      provider_reference text NOT NULL,
      merchant_reference text,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
      result_code text,
      result_desc text,
      receipt text,
      created_at timestamptz NOT NULL DEFAULT now(),
      resolved_at timestamptz,
      UNIQUE (rail, provider_reference)
    );
    CREATE UNIQUE INDEX rail_requests_order ON rail_requests (rail, order_id, kind);
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query(`
    DROP TABLE IF EXISTS rail_requests;
    DROP TRIGGER IF EXISTS order_events_outbox ON order_events;
    DROP FUNCTION IF EXISTS paygate_order_event_outbox();
    DROP TABLE IF EXISTS webhook_deliveries, webhook_events, webhook_endpoints;
    DROP FUNCTION IF EXISTS paygate_uuid_v7();
  `);
};
