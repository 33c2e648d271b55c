/** The bench worker's workflows: Paygate's, and the `hello` baseline the benchmarks compare them with. */
export * from '../workflows';
export { hello } from './hello';
