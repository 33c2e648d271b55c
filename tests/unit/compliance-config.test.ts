import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../platform/config';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).to.be.instanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  return expect.fail('expected a ConfigError');
}

describe('unit: compliance configuration', () => {
  describe('when nothing is set', () => {
    it('then the threshold is 0.92 with a review band from 0.88, the CTR threshold USD 15000, no sanctions list is imported, and monitoring is on', () => {
      expect(loadConfig({}).compliance).to.deep.equal({
        screening: { nameThreshold: 0.92, reviewThreshold: 0.88, reviewSlaMs: 86_400_000 },
        ctrThresholdUsd: '15000',
        sanctionsLists: { ofac: [], un: [], eu: [] },
        sanctionsImportEveryMs: 86_400_000,
        reportMaxRows: 10_000,
        reportTimeoutMs: 120_000,
        monitoringEnabled: true,
      });
    });
  });

  describe('when settings are given', () => {
    it('then they are parsed, and the sanctions sources split on commas', () => {
      const cfg = loadConfig({
        SCREENING_NAME_THRESHOLD: '0.9',
        CTR_THRESHOLD_USD: '10000.50',
        SCREENING_REVIEW_THRESHOLD: '0.8',
        SANCTIONS_LIST_PATH_OR_URL: ' lists/sdn.csv , https://example.org/alt.csv,',
        UN_SANCTIONS_LIST_PATH_OR_URL: 'lists/consolidated.xml',
        EU_SANCTIONS_LIST_PATH_OR_URL: 'https://example.org/eu.xml',
        COMPLIANCE_REPORT_MAX_ROWS: '50',
      }).compliance;
      expect(cfg.screening).to.deep.include({ nameThreshold: 0.9, reviewThreshold: 0.8 });
      expect(cfg.ctrThresholdUsd).to.equal('10000.50');
      expect(cfg.sanctionsLists).to.deep.equal({
        ofac: ['lists/sdn.csv', 'https://example.org/alt.csv'],
        un: ['lists/consolidated.xml'],
        eu: ['https://example.org/eu.xml'],
      });
      expect(cfg.reportMaxRows).to.equal(50);
    });

    it('then an empty sanctions setting means no import', () => {
      expect(loadConfig({ SANCTIONS_LIST_PATH_OR_URL: '' }).compliance.sanctionsLists.ofac).to.deep.equal([]);
    });
  });

  describe('when a setting is wrong', () => {
    const cases: [string, Record<string, string>][] = [
      ['SCREENING_NAME_THRESHOLD', { SCREENING_NAME_THRESHOLD: '1.5' }],
      ['SCREENING_NAME_THRESHOLD', { SCREENING_NAME_THRESHOLD: '0' }],
      ['SCREENING_REVIEW_THRESHOLD', { SCREENING_REVIEW_THRESHOLD: '0.95' }],
      ['CTR_THRESHOLD_USD', { CTR_THRESHOLD_USD: '15k' }],
      ['FX_RATES_TO_KES', { FX_RATES_TO_KES: 'BTC=11000000' }],
    ];
    for (const [variable, env] of cases) {
      it(`then ${JSON.stringify(env)} is refused, naming ${variable}`, () => {
        expect(problemsOf(env).some((p) => p.startsWith(`${variable}: `))).to.equal(true);
      });
    }
  });
});
