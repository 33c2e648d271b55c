import { expect } from 'chai';
import { DEFAULT_RULE_SET, RULE_IDS, type Band, type RuleId, type RuleParameters, type RuleSet } from '../../domain/monitoring/rule-set';
import {
  dormantReactivation,
  evaluate,
  fanIn,
  fanOut,
  newAccountHighValue,
  p2pWashTrading,
  passThrough,
  roundAmounts,
  scoreTypology,
  structuring,
  velocity,
  type HistoryAggregates,
  type Movement,
  type RuleResults,
} from '../../domain/monitoring/rules';

const AT = new Date('2026-11-27T12:00:00Z');
const DAY = 86_400_000;
const P: RuleParameters = DEFAULT_RULE_SET.parameters;

/** An empty history: an account a year old with nothing in any window. */
function history(
  overrides: Partial<Omit<HistoryAggregates, 'recent'>> & { recent?: Partial<HistoryAggregates['recent']> } = {},
): HistoryAggregates {
  const { recent, ...rest } = overrides;
  return {
    kycVerified: false,
    accountOpenedAt: new Date(AT.getTime() - 365 * DAY),
    normCount: 0,
    dormantWindowCount: 1,
    ...rest,
    recent: {
      outCount: 0,
      outSumMinor: 0n,
      inCount: 0,
      inSumMinor: 0n,
      justBelowCount: 0,
      justBelowSumMinor: 0n,
      roundCount: 0,
      distinctPayers: 0,
      distinctPayees: 0,
      counterpartySeen: false,
      pairTradesBought: 0,
      pairTradesSold: 0,
      ...recent,
    },
  };
}

const movement = (overrides: Partial<Movement> = {}): Movement => ({
  kind: 'payout',
  id: 'order-1',
  customerId: 'customer-1',
  amountMinor: 1_000_00n,
  at: AT,
  counterparty: '{"phone":"+254712345678"}',
  ...overrides,
});

describe('unit: monitoring rules', () => {
  describe('structuring', () => {
    const below = 95_000_000n; // KES 950,000: just below the KES 1,000,000 reporting threshold

    it('when one movement just below the threshold follows another, together at or above it, then the band is low', () => {
      const r = structuring(movement({ amountMinor: below }), history({ recent: { justBelowCount: 1, justBelowSumMinor: 5_000_000n } }), P);
      expect(r.band).to.equal(1);
      expect(r.facts).to.deep.equal({ just_below_count: 2, just_below_sum_minor: '100000000', reporting_threshold_minor: '100000000' });
    });

    it('when the sum stays one minor unit under the threshold, then nothing is found', () => {
      const r = structuring(movement({ amountMinor: below }), history({ recent: { justBelowCount: 1, justBelowSumMinor: 4_999_999n } }), P);
      expect(r.band).to.equal(0);
    });

    it('when the count reaches the high bound exactly, then the band is high', () => {
      const r = structuring(movement({ amountMinor: below }), history({ recent: { justBelowCount: 2, justBelowSumMinor: 2n * below } }), P);
      expect(r.band).to.equal(2);
    });

    it('when the movement itself is at the threshold (it is reported anyway) or under the floor, then nothing is found', () => {
      const h = history({ recent: { justBelowCount: 5, justBelowSumMinor: 5n * below } });
      expect(structuring(movement({ amountMinor: 100_000_000n }), h, P).band).to.equal(0);
      expect(structuring(movement({ amountMinor: 89_999_999n }), h, P).band).to.equal(0);
      expect(structuring(movement({ amountMinor: 90_000_000n }), h, P).band).to.equal(2);
    });

    it('when the history is empty, then one movement alone is never structuring', () => {
      expect(structuring(movement({ amountMinor: below }), history(), P).band).to.equal(0);
    });
  });

  describe('velocity', () => {
    it('when the history is empty, then below the minimum count nothing is found', () => {
      const r = velocity(movement(), history(), P);
      expect(r.band).to.equal(0);
      expect(r.facts.recent_count).to.equal(1);
    });

    it('when the recent count is exactly three times the norm for the same length of time, then the band is low', () => {
      // Norm: 300 movements in 30 days = 10 a day; recent: 30 in 24 hours (29 before and this one) = 3×.
      const r = velocity(movement(), history({ kycVerified: true, normCount: 300, recent: { outCount: 15, inCount: 14 } }), P);
      expect(r.band).to.equal(1);
      expect(r.facts).to.include({ recent_count: 30, norm_count: 300, against_norm: 1, against_tier: 0 });
    });

    it('when it is one movement short of three times the norm, then nothing is found', () => {
      expect(velocity(movement(), history({ kycVerified: true, normCount: 301, recent: { outCount: 15, inCount: 14 } }), P).band).to.equal(
        0,
      );
    });

    it('when the norm is empty, then it counts as one movement and a burst is high', () => {
      const r = velocity(movement(), history({ recent: { outCount: 29 } }), P);
      expect(r.band).to.equal(2);
      expect(r.facts.against_norm).to.equal(2);
    });

    it('when the count reaches the tier bound, then the tier alone raises the band, and a verified tier allows more', () => {
      const busy = history({ normCount: 10_000, recent: { outCount: 59 } });
      expect(velocity(movement(), busy, P).band).to.equal(2);
      expect(velocity(movement(), { ...busy, kycVerified: true }, P).band).to.equal(1);
    });
  });

  describe('pass-through', () => {
    const inSum = 10_000_000n;

    it('when a payout brings what left to exactly 90 % of what came in, then the band is low; at 95 %, high', () => {
      expect(passThrough(movement({ amountMinor: 9_000_000n }), history({ recent: { inSumMinor: inSum } }), P).band).to.equal(1);
      expect(passThrough(movement({ amountMinor: 8_999_999n }), history({ recent: { inSumMinor: inSum } }), P).band).to.equal(0);
      const r = passThrough(movement({ amountMinor: 1_500_000n }), history({ recent: { inSumMinor: inSum, outSumMinor: 8_000_000n } }), P);
      expect(r.band).to.equal(2);
      expect(r.facts).to.deep.equal({ in_sum_minor: '10000000', out_sum_minor: '9500000' });
    });

    it('when less than the minimum came in, or the movement is a deposit, then nothing is found', () => {
      expect(passThrough(movement({ amountMinor: 9_999_999n }), history({ recent: { inSumMinor: 9_999_999n } }), P).band).to.equal(0);
      expect(passThrough(movement({ kind: 'deposit' }), history({ recent: { inSumMinor: inSum, outSumMinor: inSum } }), P).band).to.equal(
        0,
      );
    });

    it('when the history is empty, then nothing is found', () => {
      expect(passThrough(movement(), history(), P).band).to.equal(0);
    });
  });

  describe('fan-in and fan-out', () => {
    it('when a deposit from a new payer makes the tenth distinct payer, then fan-in is low; a known payer adds none', () => {
      const deposit = movement({ kind: 'deposit', counterparty: '+254700000010' });
      expect(fanIn(deposit, history({ recent: { distinctPayers: 9 } }), P)).to.deep.equal({ band: 1, facts: { distinct_payers: 10 } });
      expect(fanIn(deposit, history({ recent: { distinctPayers: 9, counterpartySeen: true } }), P).band).to.equal(0);
      expect(fanIn(deposit, history({ recent: { distinctPayers: 24 } }), P).band).to.equal(2);
    });

    it('when a payout to a new payee makes the tenth distinct payee, then fan-out is low', () => {
      expect(fanOut(movement(), history({ recent: { distinctPayees: 9 } }), P)).to.deep.equal({ band: 1, facts: { distinct_payees: 10 } });
      expect(fanOut(movement(), history({ recent: { distinctPayees: 8 } }), P).band).to.equal(0);
    });

    it('when the movement goes the other way, then neither rule fires on it', () => {
      expect(fanIn(movement(), history({ recent: { distinctPayers: 100 } }), P).band).to.equal(0);
      expect(fanOut(movement({ kind: 'deposit' }), history({ recent: { distinctPayees: 100 } }), P).band).to.equal(0);
    });
  });

  describe('new account, high value', () => {
    it('when an account six days old pays exactly the low or high amount, then the band follows; at seven days, nothing', () => {
      const young = history({ accountOpenedAt: new Date(AT.getTime() - 6 * DAY) });
      expect(newAccountHighValue(movement({ amountMinor: 10_000_000n }), young, P).band).to.equal(1);
      expect(newAccountHighValue(movement({ amountMinor: 9_999_999n }), young, P).band).to.equal(0);
      expect(newAccountHighValue(movement({ amountMinor: 50_000_000n }), young, P).band).to.equal(2);
      const week = history({ accountOpenedAt: new Date(AT.getTime() - 7 * DAY) });
      expect(newAccountHighValue(movement({ amountMinor: 50_000_000n }), week, P).band).to.equal(0);
    });
  });

  describe('dormant reactivation', () => {
    it('when an account with no movement in 90 days moves a high value, then the band follows the amount', () => {
      const dormant = history({ dormantWindowCount: 0 });
      const r = dormantReactivation(movement({ amountMinor: 20_000_000n }), dormant, P);
      expect(r.band).to.equal(2);
      expect(r.facts).to.include({ movements_in_dormant_window: 0, amount_minor: '20000000' });
      expect(dormantReactivation(movement({ amountMinor: 5_000_000n }), dormant, P).band).to.equal(1);
    });

    it('when there was one movement in the window, or the account is younger than the window, then nothing is found', () => {
      expect(dormantReactivation(movement({ amountMinor: 20_000_000n }), history({ dormantWindowCount: 1 }), P).band).to.equal(0);
      const young = history({ dormantWindowCount: 0, accountOpenedAt: new Date(AT.getTime() - 89 * DAY) });
      expect(dormantReactivation(movement({ amountMinor: 20_000_000n }), young, P).band).to.equal(0);
    });
  });

  describe('repeated round amounts', () => {
    it('when a round amount is the fifth in the window, then the band is low; the tenth, high', () => {
      expect(roundAmounts(movement({ amountMinor: 5_000_000n }), history({ recent: { roundCount: 4 } }), P).band).to.equal(1);
      expect(roundAmounts(movement({ amountMinor: 5_000_000n }), history({ recent: { roundCount: 3 } }), P).band).to.equal(0);
      expect(roundAmounts(movement({ amountMinor: 5_000_000n }), history({ recent: { roundCount: 9 } }), P).band).to.equal(2);
    });

    it('when the movement itself is not round, then the others do not make it so', () => {
      expect(roundAmounts(movement({ amountMinor: 5_000_001n }), history({ recent: { roundCount: 50 } }), P).band).to.equal(0);
    });
  });

  describe('P2P wash trading', () => {
    const trade = movement({ kind: 'p2p_trade', counterparty: 'partner-1' });

    it('when two parties traded twice each way, then the band is low; four round trips, high', () => {
      expect(p2pWashTrading(trade, history({ recent: { pairTradesBought: 2, pairTradesSold: 3 } }), P).band).to.equal(1);
      expect(p2pWashTrading(trade, history({ recent: { pairTradesBought: 4, pairTradesSold: 4 } }), P).band).to.equal(2);
    });

    it('when all the trades went one way, or the movement is no trade, then nothing is found', () => {
      expect(p2pWashTrading(trade, history({ recent: { pairTradesBought: 10, pairTradesSold: 0 } }), P).band).to.equal(0);
      expect(p2pWashTrading(movement(), history({ recent: { pairTradesBought: 9, pairTradesSold: 9 } }), P).band).to.equal(0);
    });
  });
});

describe('unit: monitoring typologies', () => {
  const none = { band: 0 as const, facts: {} };
  const results = (bands: Partial<Record<RuleId, Band>>): RuleResults =>
    Object.fromEntries(RULE_IDS.map((id) => [id, { band: bands[id] ?? none.band, facts: {} }])) as RuleResults;
  const typology = { id: 't', weights: { structuring: 50, round_amounts: 15 }, alert_threshold: 50, block_threshold: 130 };

  it('when the score is exactly the alert threshold, then the decision is review; one under, pass', () => {
    expect(scoreTypology(typology, results({ structuring: 1 }))).to.deep.equal({
      score: 50,
      alert_threshold: 50,
      block_threshold: 130,
      decision: 'review',
    });
    expect(scoreTypology({ ...typology, alert_threshold: 51 }, results({ structuring: 1 })).decision).to.equal('pass');
  });

  it('when the score is exactly the block threshold, then the decision is refuse', () => {
    expect(scoreTypology(typology, results({ structuring: 2, round_amounts: 2 })).score).to.equal(130);
    expect(scoreTypology(typology, results({ structuring: 2, round_amounts: 2 })).decision).to.equal('refuse');
  });

  it('when a rule the typology does not weigh fires, then the score is unchanged', () => {
    expect(scoreTypology(typology, results({ fan_in: 2 })).score).to.equal(0);
  });

  it('when rules are evaluated over an empty history, then every band is 0 and the decision is pass, with the version named', () => {
    const ruleSet: RuleSet = { version: 7, ...DEFAULT_RULE_SET };
    const e = evaluate(movement(), history(), ruleSet);
    expect(e.ruleSetVersion).to.equal(7);
    expect(e.decision).to.equal('pass');
    expect(Object.values(e.results).map((r) => r.band)).to.deep.equal([0, 0, 0, 0, 0, 0, 0, 0, 0]);
    expect(Object.keys(e.typologies)).to.deep.equal(DEFAULT_RULE_SET.typologies.map((t) => t.id));
  });

  it('when one typology reviews and another refuses, then the movement is refused', () => {
    const ruleSet: RuleSet = {
      version: 1,
      parameters: P,
      typologies: [
        { id: 'soft', weights: { p2p_wash_trading: 10 }, alert_threshold: 10, block_threshold: 100 },
        { id: 'hard', weights: { p2p_wash_trading: 50 }, alert_threshold: 10, block_threshold: 100 },
      ],
    };
    const e = evaluate(
      movement({ kind: 'p2p_trade', counterparty: 'p' }),
      history({ recent: { pairTradesBought: 4, pairTradesSold: 4 } }),
      ruleSet,
    );
    expect(e.typologies.soft.decision).to.equal('review');
    expect(e.typologies.hard.decision).to.equal('refuse');
    expect(e.decision).to.equal('refuse');
  });
});
