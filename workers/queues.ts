import type { Config } from '../platform/config';

/**
 * Every BullMQ queue, job name and job schedule Paygate has, in one place: the jobs process runs them,
 * and the api's metrics and queue dashboard show every queue listed here. Job data carries no payload
 * beyond ids; the job name says what to do.
 */

/**
 * Order reconciliation, idempotency-key expiry, the sanctions-list import, bank- and crypto-deposit matching,
 * reconciling the rails line by line, and asking Daraja again about unanswered paybill claims.
 */
export const MAINTENANCE_QUEUE = 'maintenance';
/** The exchange and bank catalogue refreshes. */
export const DISCOVERY_QUEUE = 'discovery';
/** Webhook dispatch and delivery, and pruning events past their retention. */
export const WEBHOOK_QUEUE = 'webhooks';

/** Every queue the jobs process works. */
export const QUEUES = [MAINTENANCE_QUEUE, DISCOVERY_QUEUE, WEBHOOK_QUEUE] as const;
export type QueueName = (typeof QUEUES)[number];

export const RECONCILE_ORDERS = 'reconcile-orders';
export const EXPIRE_IDEMPOTENCY_KEYS = 'expire-idempotency-keys';
export const IMPORT_SANCTIONS = 'import-sanctions';
export const MATCH_BANK_DEPOSITS = 'match-bank-deposits';
export const MATCH_CRYPTO_DEPOSITS = 'match-crypto-deposits';
/** Reconciliation line by line: each rail's own record of the previous day against the ledger. */
export const RECONCILE_RAILS = 'reconcile-rails';
/** Ask Daraja again about the paybill claims whose Transaction Status has not answered. */
export const RECHECK_C2B_CLAIMS = 'recheck-c2b-claims';
export const REFRESH_EXCHANGES = 'refresh-exchanges';
export const REFRESH_BANKS = 'refresh-banks';
export const DISPATCH_WEBHOOKS = 'dispatch-webhooks';
export const PRUNE_EVENTS = 'prune-events';
/** Not scheduled: one job per due delivery, queued by the dispatcher. */
export const DELIVER_WEBHOOK = 'deliver-webhook';

export interface Schedule {
  queue: QueueName;
  /** The job scheduler's id, which is also the name of the jobs it makes. */
  job: string;
  everyMs: number;
}

/**
 * Every job scheduler, with its interval from the configuration. (The sanctions import is scheduled only
 * when a list source is configured; its scheduler is removed otherwise.)
 */
export function schedules(cfg: Config): Schedule[] {
  return [
    { queue: MAINTENANCE_QUEUE, job: RECONCILE_ORDERS, everyMs: cfg.reconciler.intervalMs },
    { queue: MAINTENANCE_QUEUE, job: EXPIRE_IDEMPOTENCY_KEYS, everyMs: 60 * 60 * 1000 },
    { queue: MAINTENANCE_QUEUE, job: IMPORT_SANCTIONS, everyMs: cfg.compliance.sanctionsImportEveryMs },
    { queue: MAINTENANCE_QUEUE, job: MATCH_BANK_DEPOSITS, everyMs: cfg.wallets.matchBankDepositsEveryMs },
    { queue: MAINTENANCE_QUEUE, job: MATCH_CRYPTO_DEPOSITS, everyMs: cfg.wallets.matchCryptoDepositsEveryMs },
    { queue: MAINTENANCE_QUEUE, job: RECONCILE_RAILS, everyMs: cfg.wallets.reconcileRailsEveryMs },
    { queue: MAINTENANCE_QUEUE, job: RECHECK_C2B_CLAIMS, everyMs: cfg.wallets.c2bStatusRecheckAfterMs },
    { queue: DISCOVERY_QUEUE, job: REFRESH_EXCHANGES, everyMs: cfg.discovery.refreshExchangesEveryMs },
    { queue: DISCOVERY_QUEUE, job: REFRESH_BANKS, everyMs: cfg.discovery.refreshBanksEveryMs },
    { queue: WEBHOOK_QUEUE, job: DISPATCH_WEBHOOKS, everyMs: cfg.webhooks.dispatchEveryMs },
    { queue: WEBHOOK_QUEUE, job: PRUNE_EVENTS, everyMs: cfg.webhooks.pruneEventsEveryMs },
  ];
}

/** The interval of one scheduled job. */
export function everyMs(cfg: Config, job: string): number {
  const schedule = schedules(cfg).find((s) => s.job === job);
  if (!schedule) throw new Error(`no schedule for job ${job}`);
  return schedule.everyMs;
}
