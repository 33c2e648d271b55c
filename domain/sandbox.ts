/**
 * A transfer as the sandbox rail remembers it: the simulated provider's own record, kept by the repository
 * that owns its table and handed to the sandbox connector through its books.
 */
export interface SandboxTransfer {
  idempotency_key: string;
  reference: string;
  outcome: 'succeeded' | 'failed';
  failure_code: string | null;
  provider_code: string | null;
  sends_callback: boolean;
  settles_at: Date;
  submissions: number;
  callback_sent_at: Date | null;
}
