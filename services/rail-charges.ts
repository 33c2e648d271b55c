import { componentLogger } from '../platform/logger';
import { EXPENSE_RAIL_FEES, transfer } from '../domain/ledger';
import { postLines } from '../repositories/ledger';
import { recordRailCharge, type NewRailCharge } from '../repositories/rail-charges';
import { inTransaction } from '../repositories/transaction';

const log = componentLogger('rail-charges');

/**
 * A charge a rail took from our account (docs/wallets.md#reconciliation-line-by-line), as its own record
 * shows it: recorded and posted once per (rail, provider reference), `expense:rail_fees → rail:<method>`
 * (the operator pays it; the money left the rail). Returns whether this call posted it.
 */
export async function postRailCharge(charge: NewRailCharge): Promise<boolean> {
  const posted = await inTransaction(async (tx) => {
    const { id, created } = await recordRailCharge(charge, tx);
    if (!created) return false;
    return postLines(tx, {
      railChargeId: id,
      kind: 'rail_fee',
      currency: charge.currency,
      lines: transfer(EXPENSE_RAIL_FEES, `rail:${charge.method}`, charge.amountMinor.toString()),
    });
  });
  if (posted) log.info({ rail: charge.rail, reference: charge.providerReference }, 'a rail charge posted to expense:rail_fees');
  return posted;
}
