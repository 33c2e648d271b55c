import type { Migration } from '../migrator';

/**
 * Each KYC submission gets its own id, replaced on every resubmission, so a compliance decision names the
 * submission it reviewed and cannot land on a newer one the reviewer never saw.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`ALTER TABLE kyc_records ADD COLUMN submission_id uuid NOT NULL DEFAULT gen_random_uuid()`);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query(`ALTER TABLE kyc_records DROP COLUMN IF EXISTS submission_id`);
};
