import { componentLogger } from '../platform/logger';
import type { ExchangeDeposit } from '../connectors';
import { railConnectors } from '../services/connectors';
import { CURRENCY_SCALE, exactMinor } from '../domain/money';
import { DEPOSIT_REFERENCE_PATTERN, isCryptoAsset, normaliseDepositReference } from '../domain/wallets';
import { legacyDeposit, recordMoneyIn } from '../services/money-in';

const log = componentLogger('crypto-deposits');

/** How far back each poll reads the exchange's deposit history: a deposit confirmed late is still found. */
export const CRYPTO_DEPOSIT_LOOKBACK_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * The exchange's decimal string in minor units of the asset; null when it is not a positive amount the
 * wallet can hold exactly (more decimals than the asset's scale are never rounded away).
 */
export function depositMinor(amount: string | null, scale: number): bigint | null {
  const minor = exactMinor(amount, scale);
  return minor !== null && minor > 0n ? minor : null;
}

/**
 * The `match-crypto-deposits` job: read the exchange account's deposits (ccxt `fetchDeposits`) and credit
 * each confirmed one once per txid and output (a batched transaction's every output counts once), to the user whose deposit reference its tag (memo) quotes; anything else
 * waits unmatched for staff. A deposit stays in the history from poll to poll; the deposit's uniqueness on
 * (channel, txid, output) is what makes one seen twice count once. On the sandbox crypto rail there is no exchange:
 * money arrives through the admin simulator instead.
 */
export async function matchCryptoDeposits(now = Date.now()): Promise<{ deposits: number; credited: number }> {
  const exchange = railConnectors().receivedDeposits;
  if (!exchange) return { deposits: 0, credited: 0 };
  const confirmed = (await exchange.deposits(now - CRYPTO_DEPOSIT_LOOKBACK_MS)).filter((d) => d.status === 'ok');
  let credited = 0;
  for (const d of confirmed) {
    if (await credit(d)) credited += 1;
  }
  if (credited > 0) log.info({ deposits: confirmed.length, credited }, 'crypto deposits recorded from the exchange');
  return { deposits: confirmed.length, credited };
}

/**
 * Which output of its transaction a deposit is: the address and memo it was sent to, as the chain has them;
 * the exchange's own deposit id when it names no address. A batched transaction paying the account twice
 * is two deposits, each credited once.
 */
export function depositOutput(d: Pick<ExchangeDeposit, 'id' | 'address' | 'tag'>): string {
  if (d.address) return `${d.address}/${d.tag ?? ''}`;
  return d.id ? `id:${d.id}` : `tag:${d.tag ?? ''}`;
}

async function credit(d: ExchangeDeposit): Promise<boolean> {
  if (!isCryptoAsset(d.currency)) {
    log.warn({ txid: d.txid, currency: d.currency }, 'a deposit in an asset Paygate does not hold: left on the exchange for staff');
    return false;
  }
  const amountMinor = depositMinor(d.amount, CURRENCY_SCALE[d.currency]);
  if (amountMinor === null) {
    log.error({ txid: d.txid, currency: d.currency, amount: d.amount }, 'a deposit without an exact amount: left for staff to reconcile');
    return false;
  }
  const tag = d.tag ? normaliseDepositReference(d.tag) : '';
  // Recorded before outputs were told apart (keyed by txid alone): that deposit stands for the transaction.
  if (await legacyDeposit('crypto', d.txid)) return false;
  const { created } = await recordMoneyIn({
    channel: 'crypto',
    rail: 'ccxt',
    providerReference: d.txid,
    providerOutput: depositOutput(d),
    currency: d.currency,
    amountMinor,
    quotedReference: DEPOSIT_REFERENCE_PATTERN.exec(tag)?.[0] ?? (tag.slice(0, 64) || `no tag (${d.network ?? 'network unknown'})`),
    payer: { address: d.fromAddress },
  });
  return created;
}
