import '../platform/boot';
import type { Server } from 'node:http';
import type { Logger } from 'pino';
import { configOrExit } from '../platform/config';
import { closeDatabase, database } from '../platform/database';
import { componentLogger } from '../platform/logger';
import { closeRedis } from '../platform/redis';
import { onShutdown } from '../platform/shutdown';
import { closeTemporal } from '../platform/temporal';
import { openRepositories } from '../repositories/transaction';
import { AppError } from '../platform/errors';
import { createApp } from './app';
import { ensureAdmin } from '../services/auth-service';
import { registerPaybillUrls } from '../services/mpesa-callback-service';
import { flushApiQuota } from '../services/rate-limits';

/**
 * Register the paybill URLs with Daraja in the background, retrying with backoff (5 s doubling to 5 min)
 * until it works: the api serves meanwhile, and payouts do not depend on it. Returns a stop function.
 */
function keepRegisteringPaybill(log: Logger): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const attempt = (delayMs: number): void => {
    registerPaybillUrls().then(
      () => undefined,
      (err: unknown) => {
        if (stopped) return;
        log.error(
          { err, retryInMs: delayMs },
          'could not register the paybill URLs with Daraja; paybill payments will not be confirmed until it works',
        );
        timer = setTimeout(() => attempt(Math.min(delayMs * 2, 300_000)), delayMs);
        timer.unref();
      },
    );
  };
  attempt(5_000);
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}

/**
 * ADMIN_EMAIL/ADMIN_PASSWORD: create that admin when no account has the e-mail; leave an existing admin as
 * it is. An existing account that is not an admin stops the boot: anyone can register any e-mail, so
 * holding it proves nothing, and promoting is an operator's decision (`admin:create -- --promote`).
 */
async function bootstrapAdmin(admin: { email: string; password: string }, log: Logger): Promise<void> {
  try {
    const { user, outcome } = await ensureAdmin(admin.email, admin.password, { by: 'ADMIN_EMAIL at boot' });
    // A creation is logged by ensureAdmin itself.
    if (outcome === 'present') log.info({ email: user.email, user_id: user.user_id }, 'admin account exists: left unchanged');
  } catch (err) {
    if (!(err instanceof AppError) || err.code !== 'conflict') throw err;
    const message =
      `ADMIN_EMAIL=${admin.email}: an account with this e-mail exists and is not an admin, so the api will not ` +
      'make it one at boot (anyone can register any e-mail). Check who owns that account; if it is the ' +
      `intended admin, promote it with \`npm run admin:create -- --promote ${admin.email}\`, otherwise set ` +
      'ADMIN_EMAIL to an address no account uses. Then start again.';
    log.fatal({ email: admin.email }, message);
    process.stderr.write(`${message}\n`);
    process.exit(78);
  }
}

async function main(): Promise<void> {
  const cfg = configOrExit();
  const log = componentLogger('api');
  await database().authenticate();
  // Bound before anything queries through a model (ensureAdmin); createApp would bind them too late.
  openRepositories();
  if (cfg.admin) await bootstrapAdmin(cfg.admin, log);
  const app = createApp();
  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(cfg.http.port, cfg.http.host, () => resolve(s));
    s.on('error', reject);
  });
  server.keepAliveTimeout = 65_000;
  const stopRegistering = keepRegisteringPaybill(log);
  onShutdown(log, [
    { name: 'paybill registration', run: () => Promise.resolve(stopRegistering()) },
    { name: 'http', run: () => new Promise<void>((resolve) => server.close(() => resolve())) },
    // Before Redis closes: what this process counted of the API quota and Redis has not.
    { name: 'api quota', run: flushApiQuota },
    { name: 'temporal', run: closeTemporal },
    { name: 'redis', run: closeRedis },
    { name: 'database', run: closeDatabase },
  ]);
  log.info({ url: `http://${cfg.http.host}:${cfg.http.port}` }, 'api listening');
}

main().catch((err: unknown) => {
  componentLogger('api').fatal({ err }, 'api failed to start');
  process.exit(1);
});
