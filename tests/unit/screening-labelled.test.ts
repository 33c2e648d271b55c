import { expect } from 'chai';
import { buildLabelledSet, CROSS_SCRIPT_KINDS, evaluate, REVIEW_KINDS, screenerOverNames, type Figures } from '../support/labelled-names';

/**
 * The labelled screening set (tests/support/labelled-names.ts) screened with the default thresholds:
 * recall by kind of variant, and how many names of people who are not on the list are blocked or sent to
 * review. The figures are printed; the test fails below 0.95 cross-script recall or above 0.5 % of
 * unrelated names blocked.
 */

const NAME_THRESHOLD = 0.92;
const REVIEW_THRESHOLD = 0.88;

function table(figures: Figures): string {
  const lines = ['kind                 probes  blocked  caught (blocked or review)'];
  for (const [kind, row] of Object.entries(figures.byKind).sort()) {
    lines.push(
      `${kind.padEnd(20)} ${String(row.probes).padStart(6)}  ${(row.blocked / row.probes).toFixed(3).padStart(7)}  ${(row.caught / row.probes).toFixed(3)}`,
    );
  }
  lines.push(`cross-script recall (blocked): ${figures.crossScriptRecall.toFixed(3)}`);
  lines.push(
    `negatives: ${figures.negatives}, blocked ${figures.falsePositives} (${(figures.falsePositiveRate * 100).toFixed(2)} %), ` +
      `sent to review ${figures.negativesForReview} (${((figures.negativesForReview / figures.negatives) * 100).toFixed(1)} %)`,
  );
  for (const [kind, row] of Object.entries(figures.negativesByKind).sort()) {
    lines.push(`  negatives written in ${kind}: ${row.probes}, blocked ${row.blocked}, review ${row.review}`);
  }
  return lines.join('\n');
}

describe('unit: screening against a labelled set', function () {
  this.timeout(120_000);
  let figures: Figures;

  before(async () => {
    const set = buildLabelledSet();
    const screener = screenerOverNames(set.listed, { nameThreshold: NAME_THRESHOLD, reviewThreshold: REVIEW_THRESHOLD });
    figures = await evaluate(set, async (name) => {
      const matches = await screener.screen([{ field: 'name', type: 'name', value: name }]);
      return { verdict: matches[0]?.verdict ?? 'clear', ids: matches.map((m) => m.entryId) };
    });
    console.log(`\n${table(figures)}\n`);
  });

  describe('when names of listed people are written in another script (Cyrillic, Arabic, Chinese, and back to Latin)', () => {
    it('then at least 95 % of them are blocked at the same threshold as Latin spellings', () => {
      expect(figures.crossScriptRecall).to.be.at.least(0.95);
      for (const kind of CROSS_SCRIPT_KINDS) expect(figures.byKind[kind].probes, kind).to.be.greaterThan(50);
    });
  });

  describe('when names of people who are not on the list are screened', () => {
    it('then at least 1,000 were screened and at most 0.5 % of them are blocked', () => {
      expect(figures.negatives).to.be.at.least(1000);
      expect(figures.falsePositiveRate).to.be.at.most(0.005);
    });
  });

  describe('when a listed name is given with initials or without one of its names', () => {
    it('then it is sent to review, not blocked and not passed', () => {
      for (const kind of REVIEW_KINDS) {
        const row = figures.byKind[kind];
        expect(row.caught / row.probes, `${kind} caught`).to.be.at.least(0.95);
        expect(row.blocked / row.probes, `${kind} blocked`).to.be.at.most(0.05);
      }
    });
  });

  describe('when a Latin name is mistyped, reordered or given with an honorific', () => {
    it('then it is still caught (blocked, or held for review)', () => {
      for (const kind of ['typo', 'reorder', 'honorific'] as const) {
        const row = figures.byKind[kind];
        expect(row.caught / row.probes, kind).to.be.at.least(0.98);
      }
    });
  });
});
