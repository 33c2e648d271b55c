import { randomUUID } from 'node:crypto';
import { formatAmount, type Currency } from '../../domain/money';
import { recordSandboxArrival } from '../../repositories/sandbox-transfers';
import { recordMoneyIn } from '../../services/money-in';

/**
 * Money in for a test's payer, through the one crediting path (as a sandbox bank credit): every shilling a
 * test pays out first came in, and the sandbox bank's own books show it arrive. Enough of each currency that
 * only the case under test decides the outcome.
 */
export const TEST_FUNDING: Record<Currency, bigint> = {
  KES: 20_000_000_00n,
  USD: 1_000_000_00n,
  USDT: 1_000_000_000000n,
  USDC: 1_000_000_000000n,
  BTC: 100_00000000n,
  ETH: 1_000n * 10n ** 18n,
};

export async function fundWallets(userId: string, amounts: Partial<Record<Currency, bigint>> = TEST_FUNDING): Promise<void> {
  await Promise.all(
    (Object.entries(amounts) as [Currency, bigint][]).map(async ([currency, amountMinor]) => {
      const reference = `TEST-FUNDING-${randomUUID()}`;
      const amount = formatAmount(amountMinor, currency);
      await recordSandboxArrival({ method: 'bank_transfer', channel: 'bank_transfer', reference, currency, amount });
      await recordMoneyIn({
        channel: 'bank_transfer',
        rail: 'sandbox',
        providerReference: reference,
        currency,
        amountMinor,
        userId,
        payer: {},
      });
    }),
  );
}
