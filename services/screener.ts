import { config } from '../platform/config';
import { Screener } from '../domain/compliance/screening';
import { blocklistChangesSince } from '../repositories/compliance';

let shared: Screener | undefined;

/**
 * This process's one screener: the blocklist in memory, brought up to date from its change feed before
 * each screening. The api, the jobs process and the worker's activities all screen through it.
 */
export function screener(): Screener {
  shared ??= new Screener(blocklistChangesSince, config().compliance.screening);
  return shared;
}
