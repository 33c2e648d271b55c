import fs from 'node:fs';
import { Client, Connection, isGrpcServiceError, type TLSConfig } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { config, type Config } from './config';
import { componentLogger } from './logger';

let connection: Connection | undefined;
let client: Client | undefined;

/**
 * After a workflow start fails (Temporal down or not answering), the api leaves the next starts to the
 * reconciler for this long instead of making every caller wait out the connection timeout: orders are
 * still accepted at once, and started by the reconciler (same workflow id, so never twice).
 */
export const START_BACKOFF_MS = 5000;
let backingOffUntil = 0;
/** Workflow starts the api left to the reconciler, by reason; read by /metrics. */
export const deferredStarts = { start_failed: 0, backing_off: 0 };

/** True while starts are left to the reconciler after a recent failure (counted as `backing_off`). */
export function deferStartWhileBackingOff(now = Date.now()): boolean {
  if (now >= backingOffUntil) return false;
  deferredStarts.backing_off += 1;
  return true;
}

/** A start just failed: count it, and leave starts to the reconciler for START_BACKOFF_MS. */
export function noteStartFailed(now = Date.now()): void {
  deferredStarts.start_failed += 1;
  backingOffUntil = now + START_BACKOFF_MS;
}

/** How every Paygate process reaches Temporal: address, and TLS and API key when configured (Temporal Cloud). */
export function temporalConnectionOptions(cfg: Config['temporal'] = config().temporal): {
  address: string;
  tls?: TLSConfig;
  apiKey?: string;
} {
  const { tls, apiKey, address } = cfg;
  if (!tls) return { address, ...(apiKey ? { apiKey } : {}) };
  const read = (file: string) => fs.readFileSync(file);
  const tlsConfig: TLSConfig = {
    ...(tls.clientCertPath && tls.clientKeyPath ? { clientCertPair: { crt: read(tls.clientCertPath), key: read(tls.clientKeyPath) } } : {}),
    ...(tls.serverCaPath ? { serverRootCACertificate: read(tls.serverCaPath) } : {}),
  };
  return { address, tls: tlsConfig, ...(apiKey ? { apiKey } : {}) };
}

/**
 * A lazily connecting Temporal client: the api boots, and accepts payments, even while the Temporal
 * server is down; the reconciler starts what could not be started then.
 */
export function temporalClient(): Client {
  if (!client) {
    connection = Connection.lazy({ ...temporalConnectionOptions(), connectTimeout: '3s' });
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

const KEYWORD = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
const GRPC_DEADLINE_EXCEEDED = 4;
const GRPC_UNAVAILABLE = 14;
/** A namespace found without the search attributes is asked again after this long. */
const RECHECK_AFTER_MS = 60_000;

type AttributeState = 'ready' | 'missing' | 'unreachable';
type AttributeCheck = { state: Promise<AttributeState>; at: number; settled?: AttributeState };
/** Search attributes, by name: the workflows' own (`workflows/search-attributes.ts`), given by whoever starts them. */
type SearchAttributes = readonly { name: string }[];
/** The last check of each set of search attributes, by their names. */
const attributeChecks = new Map<string, AttributeCheck>();
const checkKey = (attributes: SearchAttributes): string => attributes.map(({ name }) => name).join(',');

/**
 * May workflows be started with Paygate's search attributes — does the namespace know them? Asked once
 * per process (again a minute after a "no", and at the next start after Temporal could not be reached).
 * Missing ones are registered when TEMPORAL_REGISTER_SEARCH_ATTRIBUTES is on and the server allows it.
 * When they cannot be had, workflows start without them and run as usual: a payment is never refused
 * for the sake of its observability. When Temporal does not answer, the error is thrown: the start
 * would fail just the same, and the caller's fallback (the reconciler, a 503) takes over at once.
 */
export async function searchAttributesReady(attributes: SearchAttributes): Promise<boolean> {
  const key = checkKey(attributes);
  let check = attributeChecks.get(key);
  const stale = check?.settled === 'missing' && Date.now() - check.at > RECHECK_AFTER_MS;
  if (!check || stale || check.settled === 'unreachable') {
    const entry: AttributeCheck = { at: Date.now(), state: checkSearchAttributes(attributes).then((state) => (entry.settled = state)) };
    attributeChecks.set(key, entry);
    check = entry;
  }
  const state = await check.state;
  if (state === 'unreachable') throw new Error('Temporal did not answer the search-attribute check');
  return state === 'ready';
}

/**
 * Start a workflow with the search attributes when the namespace knows them. Should the server refuse
 * them anyway (removed since they were checked), the start is made again without them, and the
 * namespace is asked again later.
 */
export async function startWithSearchAttributes<T>(
  attributes: SearchAttributes,
  start: (withAttributes: boolean) => Promise<T>,
): Promise<T> {
  const ready = await searchAttributesReady(attributes);
  try {
    return await start(ready);
  } catch (err) {
    if (!ready || !(err instanceof Error) || !/search attribute/i.test(err.message)) throw err;
    componentLogger('temporal').warn({ err: err.message }, 'search attributes refused; starting the workflow without them');
    attributeChecks.set(checkKey(attributes), { state: Promise.resolve('missing'), at: Date.now(), settled: 'missing' });
    return start(false);
  }
}

async function checkSearchAttributes(attributes: SearchAttributes): Promise<AttributeState> {
  const log = componentLogger('temporal');
  const { namespace, registerSearchAttributes } = config().temporal;
  const { connection: conn } = temporalClient();
  const list = async () => {
    const { customAttributes } = await conn.withDeadline(Date.now() + 5000, () => conn.operatorService.listSearchAttributes({ namespace }));
    return customAttributes;
  };
  let known: Record<string, temporal.api.enums.v1.IndexedValueType>;
  try {
    known = await list();
  } catch (err) {
    // Unavailable or too slow: Temporal is down, ask again at the next start. Anything else (no operator
    // rights, say) is an answer: the attributes cannot be checked, so workflows start without them.
    const unreachable = !isGrpcServiceError(err) || [GRPC_UNAVAILABLE, GRPC_DEADLINE_EXCEEDED].includes(Number(err.code));
    log.warn({ err: (err as Error).message }, 'could not list the search attributes of the namespace');
    if (unreachable) return 'unreachable';
    known = {};
  }
  const wrongType = attributes.filter(({ name }) => known[name] !== undefined && known[name] !== KEYWORD);
  let missing = attributes.filter(({ name }) => known[name] === undefined);
  if (missing.length > 0 && registerSearchAttributes && wrongType.length === 0) {
    try {
      await conn.withDeadline(Date.now() + 10_000, () =>
        conn.operatorService.addSearchAttributes({
          namespace,
          searchAttributes: Object.fromEntries(missing.map(({ name }) => [name, KEYWORD])),
        }),
      );
      known = await list();
      missing = missing.filter(({ name }) => known[name] !== KEYWORD);
      if (missing.length === 0) log.info({ namespace }, 'registered the Paygate search attributes');
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'could not register the Paygate search attributes');
    }
  }
  if (missing.length === 0 && wrongType.length === 0) return 'ready';
  log.warn(
    {
      namespace,
      missing: missing.map((k) => k.name),
      notKeyword: wrongType.map((k) => k.name),
      register: attributes.map((k) => `temporal operator search-attribute create --namespace ${namespace} --name ${k.name} --type Keyword`),
    },
    'workflows start without search attributes until the namespace has them (as Keyword)',
  );
  return 'missing';
}

export async function closeTemporal(): Promise<void> {
  attributeChecks.clear();
  backingOffUntil = 0;
  if (connection) {
    const closing = connection;
    connection = undefined;
    client = undefined;
    await closing.close();
  }
}
