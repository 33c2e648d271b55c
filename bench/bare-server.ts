import type { Server } from 'node:http';
import express from 'express';
import { Pool } from 'pg';

/**
 * The baseline for the order-read benchmark: a bare Express app running the same primary-key query as
 * `GET /api/v1/payments/orders/{id}` (order columns plus its events) straight through a `pg` Pool, with
 * no auth, logging, metrics, validation or ORM. Env: PORT, HOST, DATABASE_URL, DATABASE_POOL_MAX.
 */

const ORDER_SQL = `SELECT o.id, o.user_id, o.status, o.amount_minor, o.currency, o.method, o.destination, o.description,
  o.reference, o.failure_code, o.failure_reason, o.rail_reference, o.workflow_id, o.created_at, o.updated_at,
            coalesce((SELECT json_agg(json_build_object('status', e.status, 'at', e.at, 'detail', e.detail) ORDER BY e.id)
                        FROM order_events e WHERE e.order_id = o.id), '[]'::json) AS events
       FROM orders o WHERE o.id = $1`;

const db = new Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DATABASE_POOL_MAX ?? 10) });
const app = express();

app.get('/healthz', (_req, res) => {
  res.json({ status: 'ok' });
});

app.get('/orders/:id', async (req, res) => {
  const { rows } = await db.query(ORDER_SQL, [req.params.id]);
  if (rows.length === 0) {
    res.status(404).end();
    return;
  }
  res.json(rows[0]);
});

const server: Server = app.listen(Number(process.env.PORT ?? 3100), process.env.HOST ?? '127.0.0.1');

const stop = () => {
  server.close(() => {
    void db.end().finally(() => process.exit(0));
  });
  server.closeAllConnections();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
