import type { Migration } from '../migrator';

/**
 * Fees (docs/wallets.md#fees): what a payment costs on top of its amount, fixed when the order is accepted. The hold
 * takes amount + fee from the payer's wallet; settlement pays the amount to the rail and the fee to
 * `revenue:fees`; a full refund gives the fee back. Orders from before fees have none.
 */
export const up: Migration = async ({ context: sql }) => {
  await sql.query(`
    ALTER TABLE orders ADD COLUMN fee_minor numeric(38, 0) NOT NULL DEFAULT 0;
    ALTER TABLE orders ADD CONSTRAINT orders_fee_not_negative CHECK (fee_minor >= 0);
  `);
};

export const down: Migration = async ({ context: sql }) => {
  await sql.query(`
    ALTER TABLE orders DROP CONSTRAINT IF EXISTS orders_fee_not_negative;
    ALTER TABLE orders DROP COLUMN IF EXISTS fee_minor;
  `);
};
