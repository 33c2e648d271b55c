import { Client, Connection } from '@temporalio/client';
import { config } from './config';

let connection: Connection | undefined;
let client: Client | undefined;

/**
 * A lazily connecting Temporal client: the api boots, and accepts payments, even while the Temporal
 * server is down; the reconciler starts what could not be started then.
 */
export function temporalClient(): Client {
  if (!client) {
    connection = Connection.lazy({ address: config().temporal.address, connectTimeout: '3s' });
    client = new Client({ connection, namespace: config().temporal.namespace });
  }
  return client;
}

/**
 * Connect `client` if it is not yet. A connection keeps its first connection attempt for good, a failed one
 * included: after a failure the client is dropped, so that the next call, once the server is back, connects
 * afresh instead of failing forever.
 */
export async function ensureTemporalConnected(current: Client = temporalClient()): Promise<void> {
  try {
    await current.connection.ensureConnected();
  } catch (err) {
    if (client === current) await closeTemporal().catch(() => undefined);
    throw err;
  }
}

export async function temporalHealthy(): Promise<boolean> {
  try {
    const { connection: conn } = temporalClient();
    await conn.withDeadline(Date.now() + 2000, () => conn.workflowService.getSystemInfo({}));
    return true;
  } catch {
    return false;
  }
}

export async function closeTemporal(): Promise<void> {
  if (connection) {
    const closing = connection;
    connection = undefined;
    client = undefined;
    await closing.close();
  }
}
