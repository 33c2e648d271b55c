import { randomUUID } from 'node:crypto';
import type { Currency } from '../../domain/money';
import { recordMoneyIn } from '../../services/money-in';

/**
 * Money in for a test's payer, through the one crediting path (as a sandbox bank credit): every shilling a
 * test pays out first came in. Enough of each currency that only the case under test decides the outcome.
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
    (Object.entries(amounts) as [Currency, bigint][]).map(([currency, amountMinor]) =>
      recordMoneyIn({
        channel: 'bank_transfer',
        rail: 'sandbox',
        providerReference: `TEST-FUNDING-${randomUUID()}`,
        currency,
        amountMinor,
        userId,
        payer: {},
      }),
    ),
  );
}
