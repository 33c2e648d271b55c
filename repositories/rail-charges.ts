import { QueryTypes } from 'sequelize';
import { models } from '../models';
import { uuidv7 } from '../platform/ids';
import type { Tx } from './transaction';

/**
 * What the rails charged (`rail_charges`, docs/wallets.md#reconciliation-line-by-line): one row per charge
 * line of a provider's own record, unique on (rail, provider reference), so that a statement read on every
 * run records each charge once.
 */

export interface NewRailCharge {
  rail: string;
  method: string;
  providerReference: string;
  currency: string;
  amountMinor: bigint;
  description: string;
  chargedAt: Date;
}

/** Record a charge once; the row and whether this call made it. */
export async function recordRailCharge(c: NewRailCharge, tx: Tx): Promise<{ id: string; created: boolean }> {
  const [made] = await models().query<{ id: string }>(
    `INSERT INTO rail_charges (id, rail, method, provider_reference, currency, amount_minor, description, charged_at)
     VALUES (:id, :rail, :method, :reference, :currency, :amount, :description, :chargedAt)
     ON CONFLICT (rail, provider_reference) DO NOTHING RETURNING id`,
    {
      replacements: {
        id: uuidv7(),
        rail: c.rail,
        method: c.method,
        reference: c.providerReference.slice(0, 200),
        currency: c.currency,
        amount: c.amountMinor.toString(),
        description: c.description.slice(0, 500),
        chargedAt: c.chargedAt.toISOString(),
      },
      type: QueryTypes.SELECT,
      transaction: tx,
    },
  );
  if (made) return { id: made.id, created: true };
  const [known] = await models().query<{ id: string }>(
    'SELECT id FROM rail_charges WHERE rail = :rail AND provider_reference = :reference',
    { replacements: { rail: c.rail, reference: c.providerReference.slice(0, 200) }, type: QueryTypes.SELECT, transaction: tx },
  );
  return { id: known.id, created: false };
}
