import { config, isLocalRun, type Config } from '../platform/config';
import type { ApiKeyMode } from '../domain/api-keys';

/**
 * One world per deployment (README, "Sandbox and live"; docs/access.md#test-and-live-keys): a sandbox (every
 * rail the sandbox, only `test` keys) or live (every rail real, only `live` keys). Only a local run may mix
 * them (the configuration refuses a mix anywhere else), and there each key reaches the rails of its mode.
 */
export type World = 'sandbox' | 'live' | 'mixed';

export function deploymentWorld(c: Pick<Config, 'rails'> = config()): World {
  const rails = Object.values(c.rails);
  if (rails.every((r) => r === 'sandbox')) return 'sandbox';
  return rails.some((r) => r === 'sandbox') ? 'mixed' : 'live';
}

/** The one key mode this deployment issues and accepts; null in a local run, which takes either. */
export function keyModeOfDeployment(c: Config = config()): ApiKeyMode | null {
  if (isLocalRun(c)) return null;
  const world = deploymentWorld(c);
  return world === 'sandbox' ? 'test' : world === 'live' ? 'live' : null;
}
