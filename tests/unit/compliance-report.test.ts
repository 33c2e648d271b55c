import { expect } from 'chai';
import { parse } from 'csv-parse/sync';
import { kesMinorToUsd, reportToCsv, usdToKesMinorCeil } from '../../domain/compliance/report';
import { complianceReportWorkflowId } from '../../domain/compliance/report-contract';

describe('unit: compliance report', () => {
  describe('when KES is converted to USD at 129.00', () => {
    const cases: [bigint, string][] = [
      [1290000n, '100.00'],
      [193500000n, '15000.00'],
      [64n, '0.00'],
      [65n, '0.01'],
      [0n, '0.00'],
    ];
    for (const [kes, usd] of cases) {
      it(`then ${kes} KES cents are USD ${usd} (half up)`, () => {
        expect(kesMinorToUsd(kes, '129.00')).to.equal(usd);
      });
    }
  });

  describe('when the CTR threshold is expressed in KES', () => {
    it('then it is rounded up to the cent', () => {
      expect(usdToKesMinorCeil('15000', '129.00')).to.equal(193500000n);
      expect(usdToKesMinorCeil('15000', '129.5')).to.equal(194250000n);
      expect(usdToKesMinorCeil('10000.01', '0.333')).to.equal(333001n);
    });
  });

  describe('when a report is written as CSV', () => {
    it('then every value is one row named by section, item path and field, quoted where needed', () => {
      const csv = reportToCsv({
        workflow_id: 'compliance-report-x',
        period: { from: 'a', to: 'b' },
        totals: { count: 2, by_status: { completed: { count: 1, usd_equivalent: '1.00' } } },
        hits: { items: [{ id: 'h1', note: 'says "hi", twice' }], empty: [] },
        nothing: { value: null },
      });
      const rows: string[][] = parse(csv);
      expect(rows).to.deep.equal([
        ['section', 'item', 'field', 'value'],
        ['report', '', 'workflow_id', 'compliance-report-x'],
        ['period', '', 'from', 'a'],
        ['period', '', 'to', 'b'],
        ['totals', '', 'count', '2'],
        ['totals', 'by_status.completed', 'count', '1'],
        ['totals', 'by_status.completed', 'usd_equivalent', '1.00'],
        ['hits', 'items.1', 'id', 'h1'],
        ['hits', 'items.1', 'note', 'says "hi", twice'],
        ['nothing', '', 'value', ''],
      ]);
      expect(csv).to.include('"says ""hi"", twice"');
    });
  });

  describe('when a report value from user input looks like a spreadsheet formula', () => {
    it('then the cell is prefixed with a quote so it reads as text, and plain numbers stay numbers', () => {
      const csv = reportToCsv({
        hits: {
          items: [
            { screened_value: '=HYPERLINK("http://x","y")', entry_value: '@SUM(1+1)' },
            { screened_value: '+1+cmd', entry_value: '-2+3', note: '\tTAB', other: '\rCR' },
          ],
        },
        totals: { net: '-12.50', count: -3, fine: 'Wambui = ok' },
        '=key': { '@field': 'x' },
      });
      const rows: string[][] = parse(csv);
      const value = (item: string, field: string) => rows.find((r) => r[1] === item && r[2] === field)?.[3];
      expect(value('items.1', 'screened_value')).to.equal('\'=HYPERLINK("http://x","y")');
      expect(value('items.1', 'entry_value')).to.equal("'@SUM(1+1)");
      expect(value('items.2', 'screened_value')).to.equal("'+1+cmd");
      expect(value('items.2', 'entry_value')).to.equal("'-2+3");
      expect(value('items.2', 'note')).to.equal("'\tTAB");
      expect(value('items.2', 'other')).to.equal("'\rCR");
      expect(value('', 'net')).to.equal('-12.50');
      expect(value('', 'count')).to.equal('-3');
      expect(value('', 'fine')).to.equal('Wambui = ok');
      expect(rows.find((r) => r[0] === "'=key")?.[2]).to.equal("'@field");
      for (const row of rows) for (const cell of row) expect(/^[=+@\t\r]|^-(?!\d+(\.\d+)?$)/.test(cell), cell).to.equal(false);
    });
  });

  describe('when the workflow id is derived', () => {
    it('then it is the period itself', () => {
      expect(complianceReportWorkflowId('2026-01-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z')).to.equal(
        'compliance-report-2026-01-01T00:00:00.000Z_2026-02-01T00:00:00.000Z',
      );
    });
  });
});
