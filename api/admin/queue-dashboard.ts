import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { Queue } from 'bullmq';
import type { NextFunction, Request, RequestHandler, Response, Router } from 'express';
import jwt from 'jsonwebtoken';
import type { Config } from '../../platform/config';
import { AppError } from '../../platform/errors';
import { redis } from '../../platform/redis';
import { authenticateRequest } from '../auth/authentication';
import { QUEUES } from '../../workers/queues';

/**
 * The queue dashboard (Bull Board) for admins, at /admin/queues: every BullMQ queue of the jobs process,
 * its schedulers, jobs, failures and retries.
 *
 * Access needs an admin's login (a JWT), checked exactly like the API's bearer tokens; an API key, whoever
 * its owner, is refused. A browser cannot send an Authorization header when following a link, so the first
 * visit may carry the token once as `?access_token=…`: it is moved into an HttpOnly, SameSite=Strict cookie
 * scoped to /admin/queues (lasting as long as the token) and the browser is redirected to the same page
 * without it, so the token does not stay in the address bar or the history. Every later request, including
 * the dashboard's own API calls, is authenticated by that cookie.
 */

type BoardServerAdapter = Parameters<typeof createBullBoard>[0]['serverAdapter'];

export const QUEUE_DASHBOARD_PATH = '/admin/queues';
export const DASHBOARD_COOKIE = 'paygate_admin_token';
export const DASHBOARD_QUEUES = QUEUES;

function cookieValue(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name && rest.length > 0) return decodeURIComponent(rest.join('='));
  }
  return undefined;
}

/** Admins signed in only: a bearer header, the one-time `access_token` query parameter, or the dashboard cookie; never a key. */
export const adminOnly: RequestHandler = (req: Request, res: Response, next: NextFunction) => {
  const fromQuery = typeof req.query.access_token === 'string' ? req.query.access_token : undefined;
  const token = fromQuery ?? cookieValue(req, DASHBOARD_COOKIE);
  // The token from the query or the cookie is verified by the same strategy as a bearer header.
  if (token && !req.headers.authorization) req.headers.authorization = `Bearer ${token}`;
  authenticateRequest(req)
    .then((caller) => {
      // Retrying, cleaning or pausing queues is staff work: done signed in, never with a key (docs/access.md#what-a-key-can-never-do).
      if (caller.key) throw new AppError('forbidden', 'the queue dashboard takes an admin signed in, never an API key');
      if (!caller.roles.includes('admin')) throw new AppError('forbidden', 'the queue dashboard is for admins');
      if (fromQuery === undefined) {
        next();
        return;
      }
      const { exp } = (jwt.decode(fromQuery) ?? {}) as { exp?: number };
      res.cookie(DASHBOARD_COOKIE, fromQuery, {
        httpOnly: true,
        sameSite: 'strict',
        secure: req.secure,
        path: QUEUE_DASHBOARD_PATH,
        maxAge: exp ? Math.max(0, exp * 1000 - Date.now()) : undefined,
      });
      const url = new URL(req.originalUrl, 'http://paygate.invalid');
      url.searchParams.delete('access_token');
      res.redirect(303, `${url.pathname}${url.search}`);
    })
    .catch(next);
};

/** The dashboard's router, to mount at QUEUE_DASHBOARD_PATH behind `adminOnly`. */
export function queueDashboard(cfg: Config): Router {
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(QUEUE_DASHBOARD_PATH);
  const queues = DASHBOARD_QUEUES.map((name) => new BullMQAdapter(new Queue(name, { connection: redis(), prefix: cfg.queuePrefix })));
  createBullBoard({
    queues,
    // @bull-board/express pins its own copy of @bull-board/api one patch behind ours: the same interface,
    // declared twice, which TypeScript cannot unify (the adapter only calls the interface's setters).
    serverAdapter: serverAdapter as unknown as BoardServerAdapter,
    options: { uiConfig: { boardTitle: 'Paygate queues' } },
  });
  return serverAdapter.getRouter() as Router;
}
