import '../platform/boot';
import type { Server } from 'node:http';
import { configOrExit } from '../platform/config';
import { closeDatabase, database } from '../platform/database';
import { componentLogger } from '../platform/logger';
import { closeRedis } from '../platform/redis';
import { onShutdown } from '../platform/shutdown';
import { closeTemporal } from '../platform/temporal';
import { createApp } from './app';
import { ensureAdmin } from './services/auth-service';

async function main(): Promise<void> {
  const cfg = configOrExit();
  const log = componentLogger('api');
  await database().authenticate();
  if (cfg.admin) {
    const { user, created } = await ensureAdmin(cfg.admin.email, cfg.admin.password);
    log.info({ email: user.email }, created ? 'admin account created' : 'admin account present');
  }
  const app = createApp();
  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(cfg.http.port, cfg.http.host, () => resolve(s));
    s.on('error', reject);
  });
  server.keepAliveTimeout = 65_000;
  onShutdown(log, [
    { name: 'http', run: () => new Promise<void>((resolve) => server.close(() => resolve())) },
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
