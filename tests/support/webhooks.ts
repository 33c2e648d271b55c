import { loadConfig } from '../../platform/config';
import { createRedis } from '../../platform/redis';
import { startWebhookDelivery } from '../../workers/webhooks';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver';
import { withEnv } from './config-env';

/**
 * A merchant's receiver on loopback (private targets allowed for the test), and the jobs process's webhook
 * delivery running in this process with the given settings (dispatching every 100 ms unless told).
 */
export async function receiverWithDelivery(
  failFirst: number,
  settings: Record<string, string>,
): Promise<{ receiver: WebhookReceiver; close: () => Promise<void> }> {
  const restore = withEnv({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' });
  const receiver = await startWebhookReceiver(failFirst);
  const connection = createRedis({ forWorker: true });
  const cfg = loadConfig({ ...process.env, WEBHOOK_DISPATCH_EVERY_MS: '100', ...settings });
  const delivery = await startWebhookDelivery(cfg, connection);
  return {
    receiver,
    close: async () => {
      await delivery.close();
      connection.disconnect();
      await receiver.close();
      restore();
    },
  };
}
