import { DEFAULT_RULE_SET } from '../../domain/monitoring/rule-set';
import { evaluateMonth, figuresTable, FULL_MONTH, generateMonth, TEST_SLICE } from './monitoring-month';

/**
 * Print the labelled month's figures (docs/monitoring.md#the-labelled-month) with the default rule set:
 * `npm run monitoring:month` for the full month, `-- --slice` for the slice `npm test` runs.
 */
function main(): void {
  const options = process.argv.includes('--slice') ? TEST_SLICE : FULL_MONTH;
  const started = Date.now();
  const month = generateMonth(options);
  console.log(`generated in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  console.log(figuresTable(evaluateMonth(month, { version: 1, ...DEFAULT_RULE_SET })));
}

main();
