import { componentLogger } from '../platform/logger';
import { railConnectors } from '../services/connectors';
import { DEPOSIT_REFERENCE_PATTERN } from '../domain/wallets';
import { recordMoneyIn } from '../services/money-in';
import { isOperatorTopUp, returnedPayoutReferences } from '../domain/bank-statement';
import { matchPayoutReturn, recordOperatorTopUp } from '../services/statement-credits';

const log = componentLogger('bank-deposits');

/** Shillings as the statement writes them ("2,500.00", "2500.5") in cents; null when it is not an amount. */
function statementCents(amount: string): bigint | null {
  const match = /^(\d{1,15})(?:\.(\d{1,2}))?$/.exec(amount.replace(/,/g, '').trim());
  if (!match) return null;
  const cents = BigInt(match[1]) * 100n + BigInt((match[2] ?? '').padEnd(2, '0'));
  return cents > 0n ? cents : null;
}

/**
 * The `match-bank-deposits` job: read the primary bank's account statement (Jenga) and credit every credit
 * line once per bank reference, to the user whose deposit reference its narrative quotes (anything else
 * waits unmatched for staff). Two kinds of line are no customer's deposit: the operator's top-up (marked
 * PGFLOAT, to `operator:float`) and the return of one of our payouts (matched to it, never to be assigned). Lines stay on the statement from poll to poll; the deposit's uniqueness on
 * (channel, reference) is what makes a line seen twice count once. On the sandbox bank there is no
 * statement: money arrives through the admin simulator instead.
 */
export async function matchBankDeposits(): Promise<{ lines: number; credited: number }> {
  const bank = railConnectors().bankStatement;
  if (!bank) return { lines: 0, credited: 0 };
  const lines = (await bank.miniStatement()).filter((l) => l.type === 'Credit');
  let credited = 0;
  for (const line of lines) {
    const cents = statementCents(line.amount);
    if (!line.reference || cents === null) {
      log.error({ line }, 'a credit on the statement without a reference or a readable amount: left for staff to reconcile');
      continue;
    }
    // Not a customer's money: the operator's own top-up, or one of our payouts coming back.
    const credit = { rail: bank.name, reference: line.reference, amountMinor: cents, description: line.description };
    if (isOperatorTopUp(line)) {
      if (await recordOperatorTopUp(credit)) credited += 1;
      continue;
    }
    if (await matchPayoutReturn(credit, returnedPayoutReferences(line))) continue;
    const quoted = DEPOSIT_REFERENCE_PATTERN.exec(line.description.toUpperCase().replace(/[\s-]+/g, ''))?.[0];
    const { created } = await recordMoneyIn({
      channel: 'bank_transfer',
      rail: bank.name,
      providerReference: line.reference,
      currency: 'KES',
      amountMinor: cents,
      quotedReference: quoted ?? line.description.slice(0, 64),
      payer: { name: null },
    });
    if (created) credited += 1;
  }
  if (credited > 0) log.info({ lines: lines.length, credited }, 'bank deposits recorded from the statement');
  return { lines: lines.length, credited };
}
