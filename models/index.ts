import type { Sequelize } from 'sequelize';
import { database } from '../platform/database';
import { Appeal } from './appeal';
import { Bank } from './bank';
import { BlocklistEntry } from './blocklist-entry';
import { BlocklistState } from './blocklist-state';
import { CatalogueRefresh } from './catalogue-refresh';
import { ComplianceReport, ComplianceReportSection } from './compliance-report';
import { Deposit } from './deposit';
import { Exchange } from './exchange';
import { IdempotencyKey } from './idempotency-key';
import { KycAuditEntry, KycRecord } from './kyc';
import { Account, LedgerEntry, LedgerTransaction } from './ledger';
import { MonitoringCustomerDay, MonitoringEvaluation, MonitoringRuleSet } from './monitoring';
import { Order, OrderEvent, OrderLimitUsageHour } from './order';
import { P2pAd, P2pAdEvent, P2pTrade } from './p2p';
import { LateRailResult, RailRequest, RailStatusQuery } from './rail';
import { RailBalanceQuery } from './rail-balance-query';
import { RailCharge } from './rail-charge';
import { PayoutBatch, PayoutBatchItem } from './payout-batch';
import { ReconciliationBreak } from './reconciliation-break';
import { Refund } from './refund';
import { ApiKey } from './api-key';
import { ApprovalRequest } from './approval-request';
import { AuditEntry } from './audit-entry';
import { GoamlReport } from './goaml-report';
import { MonitoringCase, MonitoringCaseAlert, MonitoringCaseNote } from './monitoring-case';
import { C2bUrlToken, DepositClaim } from './deposit-claim';
import { SandboxTransfer } from './sandbox-transfer';
import { ScreeningDecision, ScreeningHit } from './screening-hit';
import { User } from './user';
import { WebhookDelivery, WebhookEndpoint, WebhookEvent } from './webhook';

export { Bank, CatalogueRefresh, Exchange };
export {
  BlocklistEntry,
  BlocklistState,
  ComplianceReport,
  ComplianceReportSection,
  KycAuditEntry,
  KycRecord,
  ScreeningDecision,
  ScreeningHit,
};
export { Appeal, P2pAd, P2pAdEvent, P2pTrade };
export { MonitoringCustomerDay, MonitoringEvaluation, MonitoringRuleSet };
export { LateRailResult, RailRequest, RailStatusQuery };
export { WebhookDelivery, WebhookEndpoint, WebhookEvent };
export { ApiKey, ApprovalRequest, AuditEntry, C2bUrlToken, DepositClaim, RailBalanceQuery, RailCharge, ReconciliationBreak };
export { GoamlReport };
export { MonitoringCase, MonitoringCaseAlert, MonitoringCaseNote };
export { PayoutBatch, PayoutBatchItem };
export {
  Account,
  Deposit,
  IdempotencyKey,
  LedgerEntry,
  LedgerTransaction,
  Order,
  OrderEvent,
  OrderLimitUsageHour,
  Refund,
  SandboxTransfer,
  User,
};

let initialised: Sequelize | undefined;

/**
 * Bind every model to a Sequelize instance (once) and return it. Without an argument: the instance the
 * models are bound to, binding them to the process's database first if they are not bound yet.
 */
export function models(given?: Sequelize): Sequelize {
  if (!given && initialised) return initialised;
  const sequelize = given ?? database();
  if (initialised === sequelize) return sequelize;
  User.initModel(sequelize);
  Order.initModel(sequelize);
  OrderEvent.initModel(sequelize);
  OrderLimitUsageHour.initModel(sequelize);
  Refund.initModel(sequelize);
  ApiKey.initModel(sequelize);
  ApprovalRequest.initModel(sequelize);
  AuditEntry.initModel(sequelize);
  MonitoringRuleSet.initModel(sequelize);
  MonitoringEvaluation.initModel(sequelize);
  MonitoringCustomerDay.initModel(sequelize);
  GoamlReport.initModel(sequelize);
  MonitoringCase.initModel(sequelize);
  MonitoringCaseAlert.initModel(sequelize);
  MonitoringCaseNote.initModel(sequelize);
  ReconciliationBreak.initModel(sequelize);
  RailCharge.initModel(sequelize);
  PayoutBatch.initModel(sequelize);
  PayoutBatchItem.initModel(sequelize);
  RailBalanceQuery.initModel(sequelize);
  LedgerTransaction.initModel(sequelize);
  LedgerEntry.initModel(sequelize);
  Account.initModel(sequelize);
  Deposit.initModel(sequelize);
  DepositClaim.initModel(sequelize);
  C2bUrlToken.initModel(sequelize);
  IdempotencyKey.initModel(sequelize);
  SandboxTransfer.initModel(sequelize);
  Exchange.initModel(sequelize);
  Bank.initModel(sequelize);
  CatalogueRefresh.initModel(sequelize);
  BlocklistEntry.initModel(sequelize);
  ScreeningHit.initModel(sequelize);
  ScreeningDecision.initModel(sequelize);
  KycRecord.initModel(sequelize);
  KycAuditEntry.initModel(sequelize);
  BlocklistState.initModel(sequelize);
  ComplianceReport.initModel(sequelize);
  ComplianceReportSection.initModel(sequelize);
  P2pAd.initModel(sequelize);
  P2pAdEvent.initModel(sequelize);
  P2pTrade.initModel(sequelize);
  Appeal.initModel(sequelize);
  RailRequest.initModel(sequelize);
  RailStatusQuery.initModel(sequelize);
  LateRailResult.initModel(sequelize);
  WebhookEndpoint.initModel(sequelize);
  WebhookEvent.initModel(sequelize);
  WebhookDelivery.initModel(sequelize);
  Order.hasMany(OrderEvent, { foreignKey: 'orderId', as: 'events' });
  LedgerTransaction.hasMany(LedgerEntry, { foreignKey: 'transactionId', as: 'entries' });
  initialised = sequelize;
  return sequelize;
}
