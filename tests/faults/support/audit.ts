import { Connection, Client } from '@temporalio/client';
import type { Attempted } from './client';
import { TERMINAL } from './client';
import { query } from './db';
import { until } from './wait';

/**
 * After a fault: did every accepted payment end, and did anything happen twice? Counted from the system of
 * record (orders, events, ledger), from the rail's side (the sandbox provider's transfers and how many
 * submissions reached it), and from Temporal (workflow executions per order).
 */

export interface OrderAudit {
  orderId: string;
  status: string;
  ledger: Record<string, number>;
  unbalancedTransactions: number;
  events: Record<string, number>;
  /** Transfers the rail's provider holds for the order. */
  transfers: number;
  /** Submissions that reached the provider (a retried submission is absorbed by its idempotency key). */
  submissions: number;
  railReferenceMatches: boolean;
  workflowRuns: number;
}

export interface Audit {
  requests: number;
  accepted: number;
  terminal: number;
  completed: number;
  /** Requests never accepted, or accepted and never finished. */
  lost: string[];
  duplicates: { orders: number; ledger: number; events: number; transfers: number; workflowRuns: number };
  /** Submissions beyond the first that reached the rail's provider and were recognised by its idempotency key. */
  resubmissions: number;
  orders: OrderAudit[];
}

export const duplicateCount = (a: Audit): number => Object.values(a.duplicates).reduce((sum, n) => sum + n, 0);

/** Wait (up to `timeoutMs`) until every accepted order is in a terminal state; returns those that are not. */
export async function awaitTerminal(orderIds: string[], timeoutMs: number): Promise<string[]> {
  let open: string[] = orderIds;
  try {
    await until(
      `${orderIds.length} orders to finish`,
      async () => {
        const found = await query<{ id: string; status: string }>('SELECT id, status FROM orders WHERE id = ANY($1::uuid[])', [orderIds]);
        const done = new Set(found.filter((o) => TERMINAL.includes(o.status)).map((o) => o.id));
        open = orderIds.filter((id) => !done.has(id));
        return open.length === 0 ? true : undefined;
      },
      timeoutMs,
      250,
    );
  } catch {
    // reported by the caller as lost
  }
  return open;
}

/** Workflow executions per workflow id on a task queue (every run, closed ones included). */
export async function workflowRunsOn(temporalAddress: string, taskQueue: string): Promise<Map<string, number>> {
  const connection = await Connection.connect({ address: temporalAddress });
  try {
    const client = new Client({ connection });
    const runs = new Map<string, number>();
    for await (const execution of client.workflow.list({ query: `TaskQueue = '${taskQueue}'` })) {
      runs.set(execution.workflowId, (runs.get(execution.workflowId) ?? 0) + 1);
    }
    return runs;
  } finally {
    await connection.close();
  }
}

const countBy = (items: string[]): Record<string, number> =>
  items.reduce<Record<string, number>>((acc, item) => ({ ...acc, [item]: (acc[item] ?? 0) + 1 }), {});

export async function auditPayments(
  attempts: Attempted[],
  options: { customerIds: string[]; temporalAddress: string; taskQueue: string },
): Promise<Audit> {
  const accepted = attempts.filter((a) => a.answer?.status === 202 && a.orderId);
  const orderIds = [...new Set(accepted.map((a) => a.orderId!))];
  const keys = attempts.map((a) => a.key);

  const perKey = await query<{ idempotency_key: string; n: string }>(
    'SELECT idempotency_key, count(*) AS n FROM orders WHERE user_id = ANY($1::uuid[]) AND idempotency_key = ANY($2::text[]) GROUP BY 1',
    [options.customerIds, keys],
  );
  const orders = await query<{ id: string; status: string; rail_reference: string | null; workflow_id: string }>(
    'SELECT id, status, rail_reference, workflow_id FROM orders WHERE id = ANY($1::uuid[])',
    [orderIds],
  );
  const ledger = await query<{ order_id: string; id: string; kind: string; entries: string; balance: string }>(
    `SELECT t.order_id, t.id, t.kind, count(e.*) AS entries,
            coalesce(sum(CASE e.direction WHEN 'debit' THEN e.amount_minor ELSE -e.amount_minor END), 0)::text AS balance
       FROM ledger_transactions t LEFT JOIN ledger_entries e ON e.transaction_id = t.id
      WHERE t.order_id = ANY($1::uuid[]) GROUP BY t.order_id, t.id, t.kind`,
    [orderIds],
  );
  const events = await query<{ order_id: string; status: string }>(
    'SELECT order_id, status FROM order_events WHERE order_id = ANY($1::uuid[])',
    [orderIds],
  );
  const transfers = await query<{ idempotency_key: string; reference: string; submissions: number }>(
    'SELECT idempotency_key, reference, submissions FROM sandbox_transfers WHERE idempotency_key = ANY($1::text[])',
    [orderIds],
  );
  const runs = await workflowRunsOn(options.temporalAddress, options.taskQueue);

  const audits: OrderAudit[] = orders.map((o) => {
    const own = transfers.filter((t) => t.idempotency_key === o.id);
    const postings = ledger.filter((l) => l.order_id === o.id);
    return {
      orderId: o.id,
      status: o.status,
      ledger: countBy(postings.map((l) => l.kind)),
      unbalancedTransactions: postings.filter((l) => l.balance !== '0' || Number(l.entries) < 2).length,
      events: countBy(events.filter((e) => e.order_id === o.id).map((e) => e.status)),
      transfers: own.length,
      submissions: own.reduce((sum, t) => sum + Number(t.submissions), 0),
      railReferenceMatches: own.length === 1 && own[0].reference === o.rail_reference,
      workflowRuns: runs.get(o.workflow_id) ?? 0,
    };
  });

  const over = (counts: number[]) => counts.reduce((sum, n) => sum + Math.max(0, n - 1), 0);
  const terminal = audits.filter((o) => TERMINAL.includes(o.status));
  const finished = new Set(terminal.map((o) => o.orderId));
  return {
    requests: attempts.length,
    accepted: orderIds.length,
    terminal: terminal.length,
    completed: audits.filter((o) => o.status === 'completed').length,
    lost: attempts.filter((a) => !a.orderId || a.answer?.status !== 202 || !finished.has(a.orderId)).map((a) => a.key),
    duplicates: {
      orders: over(perKey.map((k) => Number(k.n))),
      ledger: over(audits.flatMap((o) => Object.values(o.ledger))),
      events: over(audits.flatMap((o) => Object.values(o.events))),
      transfers: over(audits.map((o) => o.transfers)),
      workflowRuns: over(audits.map((o) => o.workflowRuns)),
    },
    resubmissions: audits.reduce((sum, o) => sum + Math.max(0, o.submissions - 1), 0),
    orders: audits,
  };
}
