import { createConnectors, type Connectors } from '../connectors';
import { config, type Config } from '../platform/config';
import { exchangeStatus } from '../repositories/catalogue';
import { findTransfer, markCallbackSent, submitTransfer } from '../repositories/sandbox-transfers';

/**
 * The connectors with what they are given from our side: the sandbox's books and the exchange catalogue.
 * The worker entry builds them once and hands them to every activity factory.
 */
export function buildConnectors(cfg: Config): Connectors {
  return createConnectors(cfg, { sandboxBooks: { submitTransfer, findTransfer, markCallbackSent }, exchangeStatus });
}

let registry: { cfg: Config; connectors: Connectors } | undefined;

/**
 * The process's connectors (the api's, the jobs process's), built once from its config: one token cache per
 * provider for the whole process. Rebuilt only when the config itself is reloaded.
 */
export function railConnectors(): Connectors {
  const cfg = config();
  if (registry?.cfg !== cfg) registry = { cfg, connectors: buildConnectors(cfg) };
  return registry.connectors;
}
