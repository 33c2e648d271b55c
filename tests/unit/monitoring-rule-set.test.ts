import { expect } from 'chai';
import { DEFAULT_RULE_SET, ruleSetProblems } from '../../domain/monitoring/rule-set';

const withChange = (change: (s: typeof DEFAULT_RULE_SET) => void): unknown => {
  const copy = structuredClone(DEFAULT_RULE_SET);
  change(copy);
  return copy;
};

describe('unit: monitoring rule sets as data', () => {
  it('when the default rule set is checked, then it is valid', () => {
    expect(ruleSetProblems(DEFAULT_RULE_SET)).to.deep.equal([]);
  });

  it('when an amount is a float or a negative number, then it is refused naming the field', () => {
    const problems = ruleSetProblems(withChange((s) => (s.parameters.structuring.reporting_threshold_minor = '1000000.50')));
    expect(problems.map((p) => p.field)).to.include('parameters.structuring.reporting_threshold_minor');
    expect(ruleSetProblems(withChange((s) => (s.parameters.fan_in.payers.low = -1)))).not.to.deep.equal([]);
  });

  it('when a high bound is under its low bound, then it is refused; equal bounds are accepted', () => {
    expect(ruleSetProblems(withChange((s) => (s.parameters.fan_out.payees = { low: 10, high: 9 })))[0].field).to.equal(
      'parameters.fan_out.payees',
    );
    expect(ruleSetProblems(withChange((s) => (s.parameters.fan_out.payees = { low: 10, high: 10 })))).to.deep.equal([]);
    expect(ruleSetProblems(withChange((s) => (s.parameters.dormant_reactivation.amount_minor = { low: '2', high: '10' })))).to.deep.equal(
      [],
    );
    expect(
      ruleSetProblems(withChange((s) => (s.parameters.dormant_reactivation.amount_minor = { low: '10', high: '2' }))),
    ).not.to.deep.equal([]);
  });

  it('when the floor is at the reporting threshold, or a round unit is 0, then it is refused', () => {
    expect(ruleSetProblems(withChange((s) => (s.parameters.structuring.floor_minor = '100000000')))).not.to.deep.equal([]);
    expect(ruleSetProblems(withChange((s) => (s.parameters.round_amounts.unit_minor = '0')))).not.to.deep.equal([]);
  });

  it('when a typology blocks below its alert, weighs nothing, or repeats an id, then it is refused', () => {
    expect(ruleSetProblems(withChange((s) => (s.typologies[0].block_threshold = s.typologies[0].alert_threshold - 1)))).not.to.deep.equal(
      [],
    );
    expect(ruleSetProblems(withChange((s) => (s.typologies[0].weights = {})))).not.to.deep.equal([]);
    expect(ruleSetProblems(withChange((s) => s.typologies.push({ ...s.typologies[0] })))).not.to.deep.equal([]);
  });

  it('when a typology weighs an unknown rule or a field is unknown, then it is refused', () => {
    expect(ruleSetProblems(withChange((s) => ((s.typologies[0].weights as Record<string, number>).invented = 5)))).not.to.deep.equal([]);
    expect(ruleSetProblems({ ...DEFAULT_RULE_SET, extra: true })).not.to.deep.equal([]);
  });

  it('when there is no typology, or the norm is not longer than the recent window, then it is refused', () => {
    expect(ruleSetProblems(withChange((s) => (s.typologies = [])))).not.to.deep.equal([]);
    expect(ruleSetProblems(withChange((s) => (s.parameters.windows = { recent_hours: 48, norm_days: 2 })))).not.to.deep.equal([]);
  });
});
