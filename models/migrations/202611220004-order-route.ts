import type { Migration } from '../migrator';

/** The route a bank transfer takes out of the primary bank (internal, PesaLink or RTGS; docs/payments.md#bank-routes). */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`ALTER TABLE orders ADD COLUMN route text CHECK (route IN ('internal', 'pesalink', 'rtgs'))`);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query('ALTER TABLE orders DROP COLUMN IF EXISTS route');
};
