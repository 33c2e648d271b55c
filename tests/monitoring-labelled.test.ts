import { expect } from 'chai';
import { DEFAULT_RULE_SET } from '../domain/monitoring/rule-set';
import { evaluateMonth, figuresTable, generateMonth, TEST_SLICE, TYPOLOGIES, type MonthFigures } from './support/monitoring-month';

/**
 * The labelled month's slice (docs/monitoring.md#the-labelled-month): 1,000 ordinary customers and 50 of each
 * planted typology, evaluated with the default rule set. The figures are printed; the test fails below a recall
 * of 0.95 for any typology or above one false alert per 100 ordinary customers.
 */
describe('monitoring: the labelled month (slice) with the default rules', function () {
  this.timeout(120_000);
  let figures: MonthFigures;

  before(() => {
    figures = evaluateMonth(generateMonth(TEST_SLICE), { version: 1, ...DEFAULT_RULE_SET });
    console.log(`\n${figuresTable(figures)}\n`);
  });

  describe('when customers planted with a typology move money', () => {
    for (const typology of TYPOLOGIES) {
      it(`then at least 95 % of the ${typology} customers are caught by the typology meant for them`, () => {
        expect(figures.recall[typology].planted, typology).to.be.at.least(50);
        expect(figures.recall[typology].recall, typology).to.be.at.least(0.95);
      });
    }
  });

  describe('when ordinary customers move money', () => {
    it('then at most one of their movements per 100 customers is held for review or refused', () => {
      expect(figures.ordinaryCustomers).to.equal(TEST_SLICE.ordinary);
      expect(figures.movementsInMonth).to.be.greaterThan(100_000);
      expect(figures.falseAlertsPer100).to.be.at.most(1);
    });
  });

  describe('when the month is generated twice with the same seed', () => {
    it('then it is the same month', () => {
      const small = { ...TEST_SLICE, ordinary: 50, perTypology: 2 };
      const a = generateMonth(small);
      const b = generateMonth(small);
      expect(a.movements.length).to.be.greaterThan(1000);
      expect(b.movements).to.deep.equal(a.movements);
      expect(generateMonth({ ...small, seed: small.seed + 1 }).movements).not.to.deep.equal(a.movements);
    });
  });
});
