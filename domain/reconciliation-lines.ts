/**
 * Reconciliation line by line (docs/wallets.md#reconciliation-line-by-line), as pure matching: each line of
 * a rail's own record of a period against the ledger's lines for the same rail, by provider reference,
 * direction, amount and day. Whatever does not pair off exactly is a break.
 */

export const BREAK_KINDS = ['missing_in_ledger', 'missing_at_rail', 'amount_mismatch', 'duplicate'] as const;
export type BreakKind = (typeof BREAK_KINDS)[number];

/** Money into the rail account (a deposit, a payout returned, a top-up) or out of it (a payout, a charge). */
export type LineDirection = 'in' | 'out';

/** One line of a rail's own record: a statement line, a transfer, a deposit or withdrawal at the exchange. */
export interface RailLine {
  reference: string;
  direction: LineDirection;
  currency: string;
  amountMinor: bigint;
  at: Date;
}

/** One ledger movement of a rail account, with what it belongs to. */
export interface LedgerRailLine extends RailLine {
  depositId: string | null;
  orderId: string | null;
}

export interface Period {
  from: Date;
  to: Date;
}

export interface FoundBreak {
  kind: BreakKind;
  direction: LineDirection;
  reference: string;
  currency: string;
  /** What the rail's lines add up to (null when it has none). */
  railAmountMinor: bigint | null;
  /** What the ledger's lines add up to (null when it has none). */
  ledgerAmountMinor: bigint | null;
  railLines: number;
  ledgerLines: number;
  /** The day (UTC) of the earliest line. */
  day: string;
  depositIds: string[];
  orderIds: string[];
}

const DAY_MS = 24 * 3600 * 1000;

/**
 * How far apart the rail and the ledger may date the same money: a deposit credited just after midnight, a
 * statement that books a transfer the next business day.
 */
export const DAY_TOLERANCE_MS = DAY_MS;

/** The window the ledger is read in for a period: the period, widened by the day tolerance on each side. */
export const ledgerWindow = (p: Period): Period => ({
  from: new Date(p.from.getTime() - DAY_TOLERANCE_MS),
  to: new Date(p.to.getTime() + DAY_TOLERANCE_MS),
});

const inPeriod = (at: Date, p: Period) => at.getTime() >= p.from.getTime() && at.getTime() < p.to.getTime();
const sum = (lines: readonly RailLine[]) => lines.reduce((acc, l) => acc + l.amountMinor, 0n);
const dayOf = (at: Date) => at.toISOString().slice(0, 10);

/**
 * Match a period's rail lines with the ledger's lines (read over `ledgerWindow(period)`). A reference is
 * looked at when one of its lines falls in the period, so a line just across the period's edge is matched
 * with its other half rather than reported. Per reference and direction:
 * - as many lines on each side, two or more (a batched transaction's outputs): paired by amount, an
 *   `amount_mismatch` when the amounts differ;
 * - otherwise two or more lines on either side: `duplicate` (a doubled credit; a transfer the rail made twice);
 * - rail lines and no ledger line: `missing_in_ledger` (a missing credit, a payout the ledger lacks);
 * - ledger lines and no rail line: `missing_at_rail`;
 * - one line each whose amounts differ, or whose days are further apart than the tolerance: `amount_mismatch`
 *   when the amounts differ; two one-sided breaks when only the days do.
 */
export function matchLines(period: Period, railLines: readonly RailLine[], ledgerLines: readonly LedgerRailLine[]): FoundBreak[] {
  const groups = new Map<string, { rail: RailLine[]; ledger: LedgerRailLine[] }>();
  const group = (l: RailLine) => {
    const key = `${l.direction}\u0000${l.currency}\u0000${l.reference}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { rail: [], ledger: [] }));
    return g;
  };
  const window = ledgerWindow(period);
  for (const l of railLines) if (inPeriod(l.at, window)) group(l).rail.push(l);
  for (const l of ledgerLines) if (inPeriod(l.at, window)) group(l).ledger.push(l);

  const breaks: FoundBreak[] = [];
  for (const { rail, ledger } of groups.values()) {
    if (![...rail, ...ledger].some((l) => inPeriod(l.at, period))) continue;
    const first = [...rail, ...ledger].sort((a, b) => a.at.getTime() - b.at.getTime())[0];
    const found = (kind: BreakKind, r: readonly RailLine[], g: readonly LedgerRailLine[]): FoundBreak => ({
      kind,
      direction: first.direction,
      reference: first.reference,
      currency: first.currency,
      railAmountMinor: r.length ? sum(r) : null,
      ledgerAmountMinor: g.length ? sum(g) : null,
      railLines: r.length,
      ledgerLines: g.length,
      day: dayOf([...r, ...g].sort((a, b) => a.at.getTime() - b.at.getTime())[0]?.at ?? first.at),
      depositIds: [...new Set(g.map((l) => l.depositId).filter((x): x is string => x !== null))],
      orderIds: [...new Set(g.map((l) => l.orderId).filter((x): x is string => x !== null))],
    });
    if (rail.length > 1 && rail.length === ledger.length) {
      // One transaction with several lines on each side (a batched crypto transaction's outputs): they pair
      // off when their amounts do.
      const amounts = (ls: readonly RailLine[]) => ls.map((l) => l.amountMinor).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      const [r, g] = [amounts(rail), amounts(ledger)];
      if (r.some((a, i) => a !== g[i])) breaks.push(found('amount_mismatch', rail, ledger));
    } else if (rail.length > 1 || ledger.length > 1) breaks.push(found('duplicate', rail, ledger));
    else if (ledger.length === 0) breaks.push(found('missing_in_ledger', rail, ledger));
    else if (rail.length === 0) breaks.push(found('missing_at_rail', rail, ledger));
    else if (rail[0].amountMinor !== ledger[0].amountMinor) breaks.push(found('amount_mismatch', rail, ledger));
    else if (Math.abs(rail[0].at.getTime() - ledger[0].at.getTime()) > DAY_TOLERANCE_MS) {
      breaks.push(found('missing_in_ledger', rail, []), found('missing_at_rail', [], ledger));
    }
  }
  return breaks.sort((a, b) => (a.day + a.reference < b.day + b.reference ? -1 : 1));
}

/** The period a daily run covers: the UTC day before `now`. */
export function previousDay(now: Date): Period {
  const to = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  return { from: new Date(to.getTime() - DAY_MS), to };
}
