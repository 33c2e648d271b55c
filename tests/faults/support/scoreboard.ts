/**
 * What the fault suite did and what came of it, one row per scenario, printed as a table at the end of the
 * run so that the numbers can be quoted: faults injected, faults recovered from, requests sent (or jobs run),
 * requests lost (accepted and never finished, or never answered for good; a job never finished, a tick
 * skipped) and duplicates (a second order, ledger posting, order event, rail transfer, workflow execution,
 * catalogue row or refresh run where there must be one).
 */

export interface ScenarioScore {
  scenario: string;
  injected: number;
  recovered: number;
  requests: number;
  lost: number;
  duplicates: number;
  note?: string;
}

const scores: ScenarioScore[] = [];

/** Record (or replace) a scenario's row; call it before asserting, so that a failing run still reports. */
export function score(row: ScenarioScore): void {
  const at = scores.findIndex((s) => s.scenario === row.scenario);
  if (at >= 0) scores[at] = row;
  else scores.push(row);
}

export function scoreboard(): string {
  if (scores.length === 0) return '';
  const totals: ScenarioScore = {
    scenario: 'total',
    injected: 0,
    recovered: 0,
    requests: 0,
    lost: 0,
    duplicates: 0,
  };
  for (const s of scores) {
    totals.injected += s.injected;
    totals.recovered += s.recovered;
    totals.requests += s.requests;
    totals.lost += s.lost;
    totals.duplicates += s.duplicates;
  }
  const header = ['scenario', 'faults injected', 'recovered', 'requests/jobs', 'lost', 'duplicates'];
  const line = (s: ScenarioScore) => [s.scenario, s.injected, s.recovered, s.requests, s.lost, s.duplicates].map(String);
  const body = [...scores, totals].map(line);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)));
  const render = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  const notes = scores.filter((s) => s.note).map((s) => `  ${s.scenario}: ${s.note}`);
  return [
    '',
    'Fault suite summary',
    render(header),
    rule,
    ...body.slice(0, -1).map(render),
    rule,
    render(body[body.length - 1]),
    ...(notes.length ? ['', ...notes] : []),
    '',
  ].join('\n');
}
