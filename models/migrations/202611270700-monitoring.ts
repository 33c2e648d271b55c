import type { Migration } from '../migrator';

/**
 * Transaction monitoring (docs/monitoring.md): the versioned rule sets compliance staff write, and every
 * evaluation with each rule's result, each typology's score, the decision and the rule-set version it used.
 * Both append-only, as the audit trail is (`audit_append_only()`): a change of rules is a new version, and a
 * past evaluation keeps the version it was made with.
 *
 * The history windows the rules read are bounded by (customer, time): orders already have
 * `orders_user_created (user_id, created_at)`; deposits and P2P trades get theirs here.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    CREATE TABLE monitoring_rule_sets (
      version integer PRIMARY KEY CHECK (version >= 1),
      parameters jsonb NOT NULL CHECK (jsonb_typeof(parameters) = 'object'),
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE TRIGGER monitoring_rule_sets_append_only BEFORE UPDATE OR DELETE ON monitoring_rule_sets
      FOR EACH ROW EXECUTE FUNCTION audit_append_only();
    CREATE TRIGGER monitoring_rule_sets_no_truncate BEFORE TRUNCATE ON monitoring_rule_sets
      FOR EACH STATEMENT EXECUTE FUNCTION audit_append_only();

    CREATE TABLE monitoring_evaluations (
      id uuid PRIMARY KEY,
      movement_kind text NOT NULL CHECK (movement_kind IN ('payout', 'deposit', 'p2p_trade', 'refund')),
      movement_id text NOT NULL CHECK (char_length(movement_id) BETWEEN 1 AND 200),
      customer_id uuid NOT NULL,
      rule_set_version integer NOT NULL REFERENCES monitoring_rule_sets (version),
      rule_results jsonb NOT NULL,
      typology_scores jsonb NOT NULL,
      decision text NOT NULL CHECK (decision IN ('pass', 'review', 'refuse')),
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX monitoring_evaluations_movement ON monitoring_evaluations (movement_kind, movement_id, id);
    CREATE INDEX monitoring_evaluations_customer ON monitoring_evaluations (customer_id, id);
    CREATE TRIGGER monitoring_evaluations_append_only BEFORE UPDATE OR DELETE ON monitoring_evaluations
      FOR EACH ROW EXECUTE FUNCTION audit_append_only();
    CREATE TRIGGER monitoring_evaluations_no_truncate BEFORE TRUNCATE ON monitoring_evaluations
      FOR EACH STATEMENT EXECUTE FUNCTION audit_append_only();

    CREATE INDEX deposits_user_created ON deposits (user_id, created_at) WHERE user_id IS NOT NULL;
    CREATE INDEX p2p_trades_pair_created ON p2p_trades (buyer_id, seller_id, created_at);
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query(`
    DROP INDEX IF EXISTS p2p_trades_pair_created;
    DROP INDEX IF EXISTS deposits_user_created;
    DROP TABLE IF EXISTS monitoring_evaluations, monitoring_rule_sets;
  `);
};
