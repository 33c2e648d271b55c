import type { Migration } from '../migrator';

/**
 * The ledger and the KYC audit trail are append-only, but row triggers do not fire for TRUNCATE, which
 * would empty them in one statement. Statement triggers refuse it too.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    CREATE TRIGGER ledger_transactions_no_truncate BEFORE TRUNCATE ON ledger_transactions
      FOR EACH STATEMENT EXECUTE FUNCTION ledger_append_only();
    CREATE TRIGGER ledger_entries_no_truncate BEFORE TRUNCATE ON ledger_entries
      FOR EACH STATEMENT EXECUTE FUNCTION ledger_append_only();
    CREATE TRIGGER kyc_audit_no_truncate BEFORE TRUNCATE ON kyc_audit
      FOR EACH STATEMENT EXECUTE FUNCTION audit_append_only();
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query(`
    DROP TRIGGER IF EXISTS ledger_transactions_no_truncate ON ledger_transactions;
    DROP TRIGGER IF EXISTS ledger_entries_no_truncate ON ledger_entries;
    DROP TRIGGER IF EXISTS kyc_audit_no_truncate ON kyc_audit;
  `);
};
