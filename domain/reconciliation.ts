import { CURRENCIES, formatAmount, type Currency } from './money';
import { FEE_REVENUE, OPERATOR_FLOAT } from './ledger';
import type { PaymentMethod } from './orders';

/**
 * Float reconciliation (docs/wallets.md#float-reconciliation), as pure arithmetic. What Paygate owes its customers (wallets, holds,
 * escrows and suspense: the liabilities) plus what it earned (fee revenue), less what the operator paid out
 * of its own funds (expenses: refunds, provider charges), must equal what its ledger says the platform holds at
 * the rails for them (the `rail:<method>` accounts, debits minus credits, less the operator's own float in
 * `operator:float`). Each rail's own
 * report (a bank balance, the sandbox's records) is set beside that figure, with the difference.
 */

export const ACCOUNT_CLASSES = ['wallets', 'holds', 'escrows', 'suspense', 'fees', 'expenses', 'float', 'rail', 'other'] as const;
export type AccountClass = (typeof ACCOUNT_CLASSES)[number];

/** The class an account belongs to, from its name. */
export function accountClassOf(account: string): AccountClass {
  if (account.startsWith('wallet:')) return 'wallets';
  if (account.startsWith('hold:')) return 'holds';
  if (account.startsWith('escrow:')) return 'escrows';
  if (account.startsWith('suspense:')) return 'suspense';
  if (account === FEE_REVENUE) return 'fees';
  if (account.startsWith('expense:')) return 'expenses';
  if (account === OPERATOR_FLOAT) return 'float';
  if (account.startsWith('rail:')) return 'rail';
  return 'other';
}

/** One stored balance (credits − debits, minor units), summed per account class or per rail account. */
export interface ClassBalance {
  currency: string;
  /** The account itself for `rail:` accounts, the class name otherwise. */
  account: string;
  balance_minor: string;
}

/** What a rail says it holds in one currency; `reported_minor` null when it was not asked or could not answer. */
export interface RailReport {
  method: PaymentMethod;
  connector: string;
  currency: Currency;
  reported_minor: string | null;
  note?: string;
}

export interface RailLine {
  method: string;
  connector: string | null;
  /** What the ledger says the platform holds at that rail. */
  ledger: string;
  /** What the rail itself reports, and the difference (reported − ledger); null when it did not report. */
  reported: string | null;
  difference: string | null;
  note?: string;
}

export interface CurrencyReconciliation {
  currency: Currency;
  liabilities: { wallets: string; holds: string; escrows: string; suspense: string; total: string };
  fee_revenue: string;
  /** What the operator paid out of its own funds (`expense:` accounts, debits minus credits): refunds, rail fees. */
  expenses: string;
  /** The operator's own money at the rails (`operator:float`: the opening float and top-ups). */
  operator_float: string;
  /** Accounts outside those classes (a nonzero figure here needs an explanation). */
  other: string;
  /**
   * What the ledger says the rails hold for customers and fees: the rail accounts less the operator's float.
   * Equals liabilities + fee revenue − expenses + other in a sound ledger.
   */
  rails_per_ledger: string;
  /** rails_per_ledger − (liabilities + fee revenue − expenses + other): zero unless the ledger itself is broken. */
  ledger_difference: string;
  rails: RailLine[];
}

/**
 * Set liabilities and fee revenue against the rail accounts, per currency, and each rail's own report
 * against its account. Currencies with no balances and no reports are left out.
 */
export function reconcile(balances: ClassBalance[], reports: RailReport[]): CurrencyReconciliation[] {
  const out: CurrencyReconciliation[] = [];
  for (const currency of CURRENCIES) {
    const mine = balances.filter((b) => b.currency === currency);
    const myReports = reports.filter((r) => r.currency === currency);
    if (mine.length === 0 && myReports.length === 0) continue;
    const sumOf = (cls: AccountClass): bigint =>
      mine.filter((b) => accountClassOf(b.account) === cls).reduce((acc, b) => acc + BigInt(b.balance_minor), 0n);
    const wallets = sumOf('wallets');
    const holds = sumOf('holds');
    const escrows = sumOf('escrows');
    const suspense = sumOf('suspense');
    const fees = sumOf('fees');
    // Expense accounts are debited: what was paid is their debits minus credits.
    const expenses = -sumOf('expenses');
    const other = sumOf('other');
    const float = sumOf('float');
    const total = wallets + holds + escrows + suspense;
    // Rail accounts are assets: the platform's money there is their debits minus credits.
    const railHoldings = new Map<string, bigint>();
    for (const b of mine.filter((x) => accountClassOf(x.account) === 'rail')) {
      const method = b.account.slice('rail:'.length);
      railHoldings.set(method, (railHoldings.get(method) ?? 0n) - BigInt(b.balance_minor));
    }
    for (const r of myReports) if (!railHoldings.has(r.method)) railHoldings.set(r.method, 0n);
    const railsTotal = [...railHoldings.values()].reduce((a, b) => a + b, 0n) - float;
    const fmt = (v: bigint) => formatAmount(v, currency);
    const rails: RailLine[] = [...railHoldings.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([method, ledger]) => {
        const report = myReports.find((r) => r.method === method);
        const reported = report?.reported_minor == null ? null : BigInt(report.reported_minor);
        return {
          method,
          connector: report?.connector ?? null,
          ledger: fmt(ledger),
          reported: reported === null ? null : fmt(reported),
          difference: reported === null ? null : fmt(reported - ledger),
          ...(report?.note ? { note: report.note } : {}),
        };
      });
    out.push({
      currency,
      liabilities: { wallets: fmt(wallets), holds: fmt(holds), escrows: fmt(escrows), suspense: fmt(suspense), total: fmt(total) },
      fee_revenue: fmt(fees),
      expenses: fmt(expenses),
      operator_float: fmt(float),
      other: fmt(other),
      rails_per_ledger: fmt(railsTotal),
      ledger_difference: fmt(railsTotal - (total + fees - expenses + other)),
      rails,
    });
  }
  return out;
}
