import type { Request, RequestHandler, Router } from 'express';
import { AppError } from '../../platform/errors';

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
  match(path: string): boolean;
}

/** After every route: a known path with another method is 405 (with `Allow`), anything else 404. */
export function routeFallback(routers: { base: string; router: Router }[]): RequestHandler {
  return (req: Request, _res, next) => {
    const allowed = new Set<string>();
    for (const { base, router } of routers) {
      if (!req.path.startsWith(base)) continue;
      const sub = req.path.slice(base.length) || '/';
      for (const layer of router.stack as unknown as Layer[]) {
        if (layer.route && layer.match(sub)) {
          for (const [method, on] of Object.entries(layer.route.methods)) if (on) allowed.add(method.toUpperCase());
        }
      }
    }
    if (allowed.size > 0) {
      next(new AppError('method_not_allowed', `${req.method} is not allowed here`, { headers: { Allow: [...allowed].join(', ') } }));
    } else {
      next(new AppError('not_found', `no route for ${req.method} ${req.path}`));
    }
  };
}

/**
 * Take a registered route off a router, so it answers exactly as a path that never existed (404). For
 * endpoints the configuration leaves unused, such as the sandbox rail's callback when no method uses it.
 */
export function unmountRoute(router: Router, path: string): void {
  const stack = router.stack as unknown as Layer[];
  for (let i = stack.length - 1; i >= 0; i--) if (stack[i].route?.path === path) stack.splice(i, 1);
}
