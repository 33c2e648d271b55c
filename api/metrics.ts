import type { RequestHandler } from 'express';
import { Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: 'paygate_' });

const httpDuration = new Histogram({
  name: 'paygate_http_request_duration_seconds',
  help: 'HTTP request latency by route and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [registry],
});

/** Time every request, labelled by its route pattern (never the raw path, which would explode cardinality). */
export const httpMetrics: RequestHandler = (req, res, next) => {
  const stop = httpDuration.startTimer();
  res.on('finish', () => {
    const route = (req.route as { path?: string } | undefined)?.path;
    const base = typeof res.locals.mountPath === 'string' ? res.locals.mountPath : req.baseUrl;
    stop({ method: req.method, route: route ? `${base}${route}` : 'unmatched', status: String(res.statusCode) });
  });
  next();
};

export const metricsEndpoint: RequestHandler = async (_req, res) => {
  res.type(registry.contentType).send(await registry.metrics());
};

/** Mounted on a router: keeps its mount path, which Express forgets once an error leaves the router. */
export const rememberMountPath: RequestHandler = (req, res, next) => {
  res.locals.mountPath = req.baseUrl;
  next();
};
