import { refreshBanks, refreshExchanges } from '../../workers/catalogue-refresh';

let refreshed: Promise<void> | undefined;

/**
 * Fill the platform catalogue of the test database once per run, as the jobs process does at boot (the
 * probe off: tests never wait on the network). Payments validate destinations against it.
 */
export function ensureCatalogue(): Promise<void> {
  refreshed ??= (async () => {
    await refreshExchanges({ includeSandbox: true, probe: null });
    await refreshBanks();
  })();
  return refreshed;
}
