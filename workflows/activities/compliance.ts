import { ApplicationFailure } from '@temporalio/activity';
import { QueryTypes, type Sequelize } from 'sequelize';
import type { Config } from '../../platform/config';
import { uuidv7 } from '../../platform/ids';
import { heartbeating } from './heartbeat';
import { buildSection, type RunQuery } from '../../domain/compliance/report';
import type { ComplianceReportInput, ReportSection } from '../../domain/compliance/report-contract';
import { Screener, type ScreeningItem } from '../../domain/compliance/screening';

export interface ComplianceActivityDeps {
  sequelize: Sequelize;
  config: Config;
  /** Defaults to a screener of its own over `sequelize`. */
  screener?: Screener;
}

interface OrderRef {
  orderId: string;
}

interface OrderToScreen {
  id: string;
  status: string;
  failure_code: string | null;
  method: string;
  destination: Record<string, string>;
  user_id: string;
  email: string;
  phone: string | null;
  full_name: string;
  id_number: string | null;
  /** For a resubmission approved on appeal: the entry that matched the original order, which the approver cleared. */
  cleared_entry_id: string | null;
}

/** What the payer is told: screening details are for compliance staff only (no tipping off). */
export const BLOCKED_REASON = 'the payment was stopped by compliance screening';
const HEARTBEAT_EVERY_MS = 5_000;

/** Who and where a payment goes: the payer's identifiers, the destination's, and the rail's country. */
function paymentScreeningItems(order: OrderToScreen): ScreeningItem[] {
  const d = order.destination;
  const items: ScreeningItem[] = [
    { field: 'user.email', type: 'email', value: order.email },
    { field: 'user.phone', type: 'phone', value: order.phone },
    { field: 'user.full_name', type: 'name', value: order.full_name },
    { field: 'user.id_number', type: 'national_id', value: order.id_number },
  ];
  switch (order.method) {
    case 'mobile_money':
      items.push(
        { field: 'destination.phone', type: 'phone', value: d.phone },
        { field: 'destination.country', type: 'country', value: 'KE' },
      );
      break;
    case 'bank_transfer':
      items.push(
        { field: 'destination.account_number', type: 'bank_account', value: d.account_number },
        { field: 'destination.account_name', type: 'name', value: d.account_name },
        { field: 'destination.country', type: 'country', value: 'KE' },
      );
      break;
    case 'crypto':
      items.push({ field: 'destination.address', type: 'crypto_address', value: d.address });
      break;
    case 'p2p':
      items.push({ field: 'destination.country', type: 'country', value: 'KE' });
      break;
  }
  return items;
}

/**
 * Compliance side effects: payment screening (the payment workflow's first step) and the compliance
 * report's steps. Idempotent: on the order id, and on the report id (the workflow run id).
 */
export function createComplianceActivities({ sequelize, config, screener }: ComplianceActivityDeps) {
  const screening = screener ?? new Screener(sequelize, { nameThreshold: config.compliance.screeningNameThreshold });

  const run: RunQuery = (statement) =>
    sequelize.query<Record<string, unknown>>(statement.sql, { bind: statement.bind, type: QueryTypes.SELECT });

  return {
    /**
     * Screen the payer and the destination against the blocklist. Clear: the order moves to `screening`.
     * A hit: the order is `rejected` with `blocked_by_compliance`, recording the entry and score.
     */
    async screenPayment({ orderId }: OrderRef): Promise<{ blocked: boolean }> {
      const [order] = await sequelize.query<OrderToScreen>(
        `SELECT o.id, o.status, o.failure_code, o.method, o.destination, u.id AS user_id, u.email, u.phone, u.full_name, k.id_number,
                (SELECT p.screening_entry_id FROM orders p WHERE p.id = o.resubmitted_from) AS cleared_entry_id
           FROM orders o
           JOIN users u ON u.id = o.user_id
           LEFT JOIN kyc_records k ON k.user_id = o.user_id
          WHERE o.id = :orderId`,
        { replacements: { orderId }, type: QueryTypes.SELECT },
      );
      if (!order) throw ApplicationFailure.nonRetryable(`order ${orderId} not found`, 'OrderNotFound');
      if (order.status === 'rejected' && order.failure_code === 'blocked_by_compliance') return { blocked: true };
      if (order.status !== 'pending') return { blocked: false };

      // A resubmission approved on appeal is screened in full again; only the one entry the approver
      // cleared (the match that rejected the original order) is excused, never one listed since.
      const [best] = (await screening.screen(paymentScreeningItems(order))).filter((m) => m.entryId !== order.cleared_entry_id);
      if (!best) {
        await sequelize.query(
          `WITH screened AS (
             UPDATE orders SET status = 'screening', workflow_started_at = coalesce(workflow_started_at, now()), updated_at = now()
              WHERE id = :orderId AND status = 'pending'
             RETURNING id
           )
           INSERT INTO order_events (order_id, status, detail)
           SELECT id, 'screening', 'screened against the blocklist: no match' FROM screened
           ON CONFLICT (order_id, status) DO NOTHING`,
          { replacements: { orderId } },
        );
        return { blocked: false };
      }
      const score = best.score.toFixed(4);
      await sequelize.query(
        `WITH rejected AS (
           UPDATE orders
              SET status = 'rejected', failure_code = 'blocked_by_compliance', failure_reason = :reason,
                  screening_entry_id = :entryId, screening_score = :score,
                  workflow_started_at = coalesce(workflow_started_at, now()), updated_at = now()
            WHERE id = :orderId AND status IN ('pending', 'screening')
           RETURNING id, user_id
         ), events AS (
           INSERT INTO order_events (order_id, status, detail)
           SELECT rejected.id, e.status, e.detail
             FROM rejected, (VALUES (1, 'screening', 'screened against the blocklist: match'),
                                    (2, 'rejected', :rejectedDetail)) AS e (n, status, detail)
            ORDER BY e.n
           ON CONFLICT (order_id, status) DO NOTHING
         )
         INSERT INTO screening_hits (id, context, user_id, order_id, field, screened_value, entry_id, score)
         SELECT :hitId, 'payment', user_id, id, :field, :screenedValue, :entryId, :score FROM rejected
         ON CONFLICT DO NOTHING`,
        {
          replacements: {
            orderId,
            reason: BLOCKED_REASON,
            rejectedDetail: `blocked_by_compliance: ${BLOCKED_REASON}`,
            entryId: best.entryId,
            score,
            hitId: uuidv7(),
            field: best.field,
            screenedValue: best.screenedValue,
          },
        },
      );
      return { blocked: true };
    },

    /** Record the report's header; its sections follow, each keyed on (report id, section). */
    async beginReport({
      reportId,
      workflowId,
      input,
      generatedAt,
    }: {
      reportId: string;
      workflowId: string;
      input: ComplianceReportInput;
      generatedAt: string;
    }): Promise<void> {
      await sequelize.query(
        `INSERT INTO compliance_reports (id, workflow_id, period_from, period_to, generated_at, parameters)
         VALUES (:reportId, :workflowId, :from, :to, :generatedAt, :parameters)
         ON CONFLICT (id) DO NOTHING`,
        {
          replacements: {
            reportId,
            workflowId,
            from: input.from,
            to: input.to,
            generatedAt,
            parameters: JSON.stringify({
              ctr_threshold_usd: input.ctrThresholdUsd,
              usd_rate_kes: input.usdRateKes,
              max_rows: input.maxRows,
            }),
          },
        },
      );
    },

    /** Aggregate one section in SQL and store it; heartbeats while the statements run. */
    async buildReportSection({
      reportId,
      section,
      input,
    }: {
      reportId: string;
      section: ReportSection;
      input: ComplianceReportInput;
    }): Promise<{ section: ReportSection }> {
      const body = await heartbeating(section, () => buildSection(section, input, run), HEARTBEAT_EVERY_MS);
      await sequelize.query(
        `INSERT INTO compliance_report_sections (report_id, section, body) VALUES (:reportId, :section, :body)
         ON CONFLICT (report_id, section) DO UPDATE SET body = EXCLUDED.body`,
        { replacements: { reportId, section, body: JSON.stringify(body) } },
      );
      return { section };
    },

    async completeReport({ reportId }: { reportId: string }): Promise<void> {
      await sequelize.query('UPDATE compliance_reports SET completed_at = coalesce(completed_at, now()) WHERE id = :reportId', {
        replacements: { reportId },
      });
    },
  };
}

export type ComplianceActivities = ReturnType<typeof createComplianceActivities>;
