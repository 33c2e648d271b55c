import { config } from '../platform/config';
import { componentLogger } from '../platform/logger';
import { CURRENCY_SCALE, decimalToScaled, exactMinor, isCurrency } from '../domain/money';
import type { PaymentMethod } from '../domain/orders';
import { reconcile, type CurrencyReconciliation, type RailReport } from '../domain/reconciliation';
import { CRYPTO_ASSETS, type CryptoAsset } from '../domain/wallets';
import { classBalances } from '../repositories/ledger';
import { sandboxHoldings } from '../repositories/sandbox-transfers';
import { railConnectors } from './connectors';
import { askMpesaBalance, latestMpesaBalance } from './mpesa-balance-service';
import { primaryBankBalance } from './primary-bank-service';

const log = componentLogger('reconciliation');

export interface ReconciliationView {
  generated_at: string;
  data: CurrencyReconciliation[];
}

type Rails = ReturnType<typeof config>['rails'];

/**
 * The sandbox keeps its own books, apart from Paygate's tables (docs/wallets.md#reconciliation-line-by-line):
 * what its simulated provider took in (collections, and the money its simulators made arrive) less what it
 * paid out (settled, successful payouts), per method and currency.
 */
async function sandboxReports(rails: Rails): Promise<RailReport[]> {
  const onSandbox = (Object.keys(rails) as PaymentMethod[]).filter((m) => rails[m as keyof Rails] === 'sandbox');
  if (onSandbox.length === 0) return [];
  const reports: RailReport[] = [];
  for (const h of await sandboxHoldings()) {
    const method = h.method as PaymentMethod;
    const minor = isCurrency(h.currency) ? exactMinor(h.amount, CURRENCY_SCALE[h.currency]) : null;
    if (onSandbox.includes(method) && isCurrency(h.currency) && minor !== null) {
      reports.push({ method, connector: 'sandbox', currency: h.currency, reported_minor: minor.toString() });
    }
  }
  return reports;
}

async function bankReport(): Promise<RailReport> {
  try {
    const balance = await primaryBankBalance();
    return { method: 'bank_transfer', connector: 'jenga', currency: 'KES', reported_minor: decimalToScaled(balance.current, 2).toString() };
  } catch (err) {
    log.warn({ err }, 'the primary bank did not report its balance');
    return { method: 'bank_transfer', connector: 'jenga', currency: 'KES', reported_minor: null, note: 'the primary bank did not answer' };
  }
}

/**
 * M-Pesa's balance: Daraja answers an Account Balance query only later, at our URL, so each reconciliation
 * asks again and reports the latest answer recorded, saying when M-Pesa gave it.
 */
async function mpesaReport(): Promise<RailReport> {
  const asked = await askMpesaBalance();
  const latest = await latestMpesaBalance();
  const report: RailReport = { method: 'mobile_money', connector: 'daraja', currency: 'KES', reported_minor: null };
  if (!latest || latest.balance_minor === null) {
    return {
      ...report,
      note: asked ? 'an AccountBalance query was sent; M-Pesa has not answered one yet' : 'Daraja did not take an AccountBalance query',
    };
  }
  const at = latest.answered_at ? new Date(latest.answered_at).toISOString() : 'an unknown time';
  return { ...report, reported_minor: latest.balance_minor, note: `M-Pesa's AccountBalance as answered at ${at}` };
}

/**
 * The exchange account's balance per crypto asset, from the raw answer to ccxt `fetchBalance` (free plus
 * locked, as the exchange wrote them), never from ccxt's float figures.
 */
async function exchangeReports(): Promise<RailReport[]> {
  const report = (currency: CryptoAsset, reported: bigint | null, note?: string): RailReport => ({
    method: 'crypto',
    connector: 'ccxt',
    currency,
    reported_minor: reported === null ? null : reported.toString(),
    ...(note ? { note } : {}),
  });
  const holdings = railConnectors().exchangeHoldings;
  let balances: Map<string, string[]> | null;
  try {
    balances = holdings ? await holdings.exactBalances() : null;
  } catch (err) {
    log.warn({ err }, 'the exchange did not report its balances');
    return CRYPTO_ASSETS.map((c) => report(c, null, 'the exchange did not answer'));
  }
  if (!balances) {
    return CRYPTO_ASSETS.map((c) =>
      report(c, null, "ccxt's unified balance is made of floats; this exchange's exact balances are not read"),
    );
  }
  const known = balances;
  return CRYPTO_ASSETS.map((currency) => {
    const parts = (known.get(currency) ?? []).map((p) => exactMinor(p, CURRENCY_SCALE[currency]));
    if (parts.some((p) => p === null)) return report(currency, null, `the exchange wrote a balance Paygate cannot hold exactly`);
    return report(
      currency,
      parts.reduce<bigint>((sum, p) => sum + (p ?? 0n), 0n),
    );
  });
}

/** Customer liabilities and fee revenue against what the rails hold, per currency (docs/wallets.md#float-reconciliation). */
export async function floatReconciliation(): Promise<ReconciliationView> {
  const rails = config().rails;
  const reports: RailReport[] = await sandboxReports(rails);
  if (rails.bank_transfer === 'jenga') reports.push(await bankReport());
  if (rails.mobile_money === 'daraja') reports.push(await mpesaReport());
  if (rails.crypto === 'ccxt') reports.push(...(await exchangeReports()));
  return { generated_at: new Date().toISOString(), data: reconcile(await classBalances(), reports) };
}
