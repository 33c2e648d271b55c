import type { Migration } from '../migrator';

/**
 * Monitoring's day counts without a queue on one customer's day (docs/monitoring.md#history-windows).
 *
 * Until now a customer's day was one row, and every movement of that customer that day updated it: two payments
 * of one payer recorded at once waited on each other's transaction, commit included, however unrelated. A busy
 * payer (a business paying out, one payment after another) had all of its orders recorded one at a time, and
 * Postgres spent more on the waiting than on the orders.
 *
 * Now a day is one or more rows, its slots; the day's count is their sum, still read from the primary key alone.
 * A movement counts on the first slot of its day that no other transaction holds (`FOR UPDATE SKIP LOCKED`), and
 * when every slot is held, on a new one of its own, so one more movement never waits for another. A movement
 * taken away (refused, failed, moved to another day or owner, deleted) is taken from a slot that has one to give,
 * so no slot ever goes below zero; only when every such slot is held does it wait for one. A day has as many slots
 * as it ever had movements recorded at once, and one when they came one at a time.
 *
 * The existing rows become slot 0 of their day. Taken back, each day's slots are summed into one row again and
 * the count is kept as before.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    ALTER TABLE monitoring_customer_days ADD COLUMN slot integer NOT NULL DEFAULT 0;
    ALTER TABLE monitoring_customer_days DROP CONSTRAINT monitoring_customer_days_pkey;
    ALTER TABLE monitoring_customer_days ADD CONSTRAINT monitoring_customer_days_pkey
      PRIMARY KEY (customer_id, day, slot) INCLUDE (movements);

    CREATE OR REPLACE FUNCTION monitoring_customer_days_count(customer uuid, at timestamptz, delta integer) RETURNS void
      LANGUAGE plpgsql AS $$
        DECLARE
          v_day date := (at AT TIME ZONE 'UTC')::date;
          v_slot integer;
          v_new integer := pg_backend_pid();
        BEGIN
          LOOP
            -- A slot no other transaction holds (this one's own included); to take a movement away, one that has one.
            SELECT slot INTO v_slot FROM monitoring_customer_days
             WHERE customer_id = customer AND day = v_day AND (delta > 0 OR movements > 0)
             ORDER BY slot LIMIT 1 FOR UPDATE SKIP LOCKED;
            IF NOT FOUND AND delta < 0 THEN
              -- Every slot with a movement is held: wait for the first to be let go (and skip it if it has none left).
              SELECT slot INTO v_slot FROM monitoring_customer_days
               WHERE customer_id = customer AND day = v_day AND movements > 0
               ORDER BY slot LIMIT 1 FOR UPDATE;
              -- Nothing to take away: nothing was counted.
              IF NOT FOUND THEN RETURN; END IF;
            END IF;
            IF FOUND THEN
              UPDATE monitoring_customer_days SET movements = movements + delta
               WHERE customer_id = customer AND day = v_day AND slot = v_slot;
              RETURN;
            END IF;
            -- Every slot of the day is held, or it has none yet: a new one. A slot number some other transaction
            -- took meanwhile is left to it (DO NOTHING), and the next try takes a number of chance.
            INSERT INTO monitoring_customer_days (customer_id, day, slot, movements)
            VALUES (customer, v_day, v_new, delta)
            ON CONFLICT (customer_id, day, slot) DO NOTHING;
            IF FOUND THEN RETURN; END IF;
            v_new := floor(random() * 2147483647)::integer;
          END LOOP;
        END
      $$;
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query(`
    LOCK TABLE monitoring_customer_days IN EXCLUSIVE MODE;
    CREATE TEMPORARY TABLE monitoring_days_summed ON COMMIT DROP AS
      SELECT customer_id, day, sum(movements)::integer AS movements FROM monitoring_customer_days GROUP BY customer_id, day;
    DELETE FROM monitoring_customer_days;
    ALTER TABLE monitoring_customer_days DROP CONSTRAINT monitoring_customer_days_pkey;
    ALTER TABLE monitoring_customer_days DROP COLUMN slot;
    ALTER TABLE monitoring_customer_days ADD CONSTRAINT monitoring_customer_days_pkey PRIMARY KEY (customer_id, day) INCLUDE (movements);
    INSERT INTO monitoring_customer_days (customer_id, day, movements)
      SELECT customer_id, day, movements FROM monitoring_days_summed ORDER BY customer_id, day;

    CREATE OR REPLACE FUNCTION monitoring_customer_days_count(customer uuid, at timestamptz, delta integer) RETURNS void
      LANGUAGE plpgsql AS $$
        BEGIN
          IF delta > 0 THEN
            INSERT INTO monitoring_customer_days AS d (customer_id, day, movements)
            VALUES (customer, (at AT TIME ZONE 'UTC')::date, delta)
            ON CONFLICT (customer_id, day) DO UPDATE SET movements = d.movements + EXCLUDED.movements;
          ELSE
            UPDATE monitoring_customer_days SET movements = movements + delta
             WHERE customer_id = customer AND day = (at AT TIME ZONE 'UTC')::date;
          END IF;
        END
      $$;
  `);
};
