import { SIGNATURE_HEADER, verifyWebhookSignature } from '../../domain/webhooks/signing';
import { startFakeServer, type FakeServer } from './http';

/**
 * A merchant's webhook receiver: checks every signature, answers 500 to the first `failFirst` tries of each
 * event, and 503 to everything while `down`.
 */
export interface ReceivedEvent {
  eventId: string;
  headerEventId: string | undefined;
  signatureValid: boolean;
  answered: number;
  body: { id: string; type: string; data: { order_id: string; status: string; failure_code: string | null } };
}

export interface WebhookReceiver extends FakeServer {
  secret: string;
  /** While true, every request is answered 503, as by a receiver that is down. */
  down: boolean;
  received: ReceivedEvent[];
  /** The events answered 2xx, i.e. acknowledged. */
  acknowledged(): ReceivedEvent[];
}

export async function startWebhookReceiver(failFirst = 2): Promise<WebhookReceiver> {
  const tries = new Map<string, number>();
  const received: ReceivedEvent[] = [];
  const receiver: WebhookReceiver = {
    secret: '',
    down: false,
    received,
    acknowledged: () => received.filter((r) => r.answered < 300),
    url: '',
    close: () => Promise.resolve(),
  };
  const server = await startFakeServer((req) => {
    const body = req.json<ReceivedEvent['body']>();
    const n = (tries.get(body.id) ?? 0) + 1;
    tries.set(body.id, n);
    const signatureValid = verifyWebhookSignature(
      receiver.secret,
      req.rawBody,
      req.headers[SIGNATURE_HEADER.toLowerCase()] as string | undefined,
    );
    const answered = receiver.down ? 503 : !signatureValid ? 401 : n <= failFirst ? 500 : 200;
    received.push({
      eventId: body.id,
      headerEventId: req.headers['paygate-event-id'] as string | undefined,
      signatureValid,
      answered,
      body,
    });
    return Promise.resolve({ status: answered, body: { ok: answered === 200 } });
  });
  receiver.url = `${server.url}/hooks`;
  receiver.close = () => server.close();
  return receiver;
}
