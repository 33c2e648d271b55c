export { payment } from './payment';
export { trade } from './trade';
export { appeal } from './appeal';
export { deposit } from './deposit';
// Workflow types are export names; the compliance report's is `compliance-report`.
export { complianceReport as 'compliance-report' } from './compliance-report';
export { payoutBatch as 'payout-batch' } from './payout-batch';
