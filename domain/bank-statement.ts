/**
 * What a credit on the primary bank's statement is (docs/wallets.md#money-in-is-proven), as pure rules:
 * the operator's own top-up (its narration or reference carries the marker `PGFLOAT`), the return of one of
 * our payouts (the bank names the payout's reference: as the line's reference, or after RETURN, RTN,
 * REVERSAL or RVSL in the narration), or a customer's deposit.
 */

/** The marker an operator puts in the narration (or reference) of a transfer topping up the float. */
export const OPERATOR_TOPUP_MARKER = 'PGFLOAT';

const squeeze = (s: string | null): string => (s ?? '').toUpperCase().replace(/[\s-]+/g, '');

/** Whether a statement credit is the operator's own top-up. */
export const isOperatorTopUp = (line: { description: string; reference: string | null }): boolean =>
  squeeze(line.description).includes(OPERATOR_TOPUP_MARKER) || squeeze(line.reference).includes(OPERATOR_TOPUP_MARKER);

/** The references a statement credit may name one of our payouts by, if it is that payout's return. */
export function returnedPayoutReferences(line: { description: string; reference: string | null }): string[] {
  const named = /\b(?:RETURN(?:ED)?|RTN|REVERSAL|RVSL)\b[^A-Z0-9]*([A-Z0-9][A-Z0-9-]{5,})/i.exec(line.description)?.[1];
  return [...new Set([named, line.reference].filter((r): r is string => typeof r === 'string' && r.length > 0))];
}

/**
 * Whether a statement debit is the bank's own charge (a transfer charge, a commission, excise duty on a
 * charge) rather than a payout of ours: its narration says so. Charges are posted to `expense:rail_fees`.
 */
export const isBankCharge = (line: { description: string; type: 'Debit' | 'Credit' }): boolean =>
  line.type === 'Debit' && /\b(?:CHARGES?|COMMISSION|EXCISE\s+DUTY|SERVICE\s+FEE|TRANSACTION\s+FEE)\b/i.test(line.description);
