import { QueryTypes, UniqueConstraintError, type Transaction } from 'sequelize';
import { models } from '../models';

/**
 * What a rail said arrived that is not (yet) a credited deposit (`deposit_claims`), and the paybill URLs'
 * tokens (`c2b_url_tokens`): docs/wallets.md#money-in-is-proven.
 */

export type ClaimChannel = 'mpesa_c2b' | 'mpesa_stk' | 'bank_transfer';
/**
 * `rejected`: refused at the door (address, token); `checking`: waiting for the rail's own word;
 * `unconfirmed`: the rail did not confirm it (or something in it differs); `credited`: proven and credited
 * (`deposit_id`); `returned`: a bank credit matched to one of our payouts (`order_id`).
 */
export type ClaimStatus = 'rejected' | 'checking' | 'unconfirmed' | 'credited' | 'returned';
export const OPEN_CLAIM_STATUSES: readonly ClaimStatus[] = ['rejected', 'checking', 'unconfirmed'];

export interface ClaimRow {
  id: string;
  channel: ClaimChannel;
  status: ClaimStatus;
  reason: string | null;
  provider_reference: string | null;
  currency: string;
  amount_minor: string | null;
  account_reference: string;
  payer_phone: string | null;
  payer_name: string | null;
  source_address: string | null;
  status_conversation_id: string | null;
  status_originator_conversation_id: string | null;
  status_queries: number;
  deposit_id: string | null;
  order_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface NewClaim {
  channel: ClaimChannel;
  status: Extract<ClaimStatus, 'rejected' | 'checking' | 'unconfirmed' | 'returned'>;
  reason: string | null;
  providerReference: string | null;
  currency?: string;
  amountMinor: string | null;
  accountReference: string;
  payerPhone: string | null;
  payerName: string | null;
  sourceAddress: string | null;
  body: unknown;
  orderId?: string | null;
}

const CLAIM_COLUMNS = `id, channel, status, reason, provider_reference, currency, amount_minor::text AS amount_minor, account_reference,
  payer_phone, payer_name, source_address, status_conversation_id, status_originator_conversation_id, status_queries, deposit_id, order_id,
  created_at, updated_at`;

/**
 * Record a claim. A claim that passed the door is kept once per (channel, provider reference, amount,
 * account): `created` is false for a repeat, with the row recorded first. A rejected one is kept every time.
 */
export async function recordClaim(claim: NewClaim, tx?: Transaction): Promise<{ row: ClaimRow; created: boolean }> {
  const replacements = {
    ...claim,
    currency: claim.currency ?? 'KES',
    orderId: claim.orderId ?? null,
    body: JSON.stringify(claim.body ?? {}),
  };
  const [inserted] = await models().query<ClaimRow>(
    `INSERT INTO deposit_claims (channel, status, reason, provider_reference, currency, amount_minor, account_reference,
                                 payer_phone, payer_name, source_address, body, order_id)
     VALUES (:channel, :status, :reason, :providerReference, :currency, :amountMinor, :accountReference,
             :payerPhone, :payerName, :sourceAddress, CAST(:body AS jsonb), :orderId)
     ON CONFLICT (channel, provider_reference, amount_minor, account_reference) WHERE status <> 'rejected' DO NOTHING
     RETURNING ${CLAIM_COLUMNS}`,
    { replacements, type: QueryTypes.SELECT, transaction: tx },
  );
  if (inserted) return { row: inserted, created: true };
  const [existing] = await models().query<ClaimRow>(
    `SELECT ${CLAIM_COLUMNS} FROM deposit_claims
      WHERE channel = :channel AND provider_reference = :providerReference AND amount_minor = :amountMinor
        AND account_reference = :accountReference AND status <> 'rejected'`,
    { replacements, type: QueryTypes.SELECT, transaction: tx },
  );
  return { row: existing, created: false };
}

export async function findClaim(claimId: string, tx?: Transaction): Promise<ClaimRow | undefined> {
  const [row] = await models().query<ClaimRow>(`SELECT ${CLAIM_COLUMNS} FROM deposit_claims WHERE id = :claimId`, {
    replacements: { claimId },
    type: QueryTypes.SELECT,
    transaction: tx,
  });
  return row;
}

/** The ids Daraja gave the status query sent for a claim: only its answer is taken. */
export async function recordClaimStatusQuery(
  claimId: string,
  ids: { conversationId: string; originatorConversationId: string },
): Promise<void> {
  await models().query(
    `UPDATE deposit_claims SET status_conversation_id = :conversationId, status_originator_conversation_id = :originatorConversationId,
            updated_at = now()
      WHERE id = :claimId`,
    { replacements: { claimId, ...ids } },
  );
}

/** How a claim's status queries back off: the next is due `afterMs` after one, doubled per query sent, at most `maxMs`. */
export interface StatusQueryBackoff {
  afterMs: number;
  maxMs: number;
}

/** One more status query for the claim, and when the next one is due if the rail has not answered by then. */
const NEXT_STATUS_QUERY = `status_queries = status_queries + 1,
  next_status_query_at = now() + make_interval(secs => least(:afterMs * power(2, least(status_queries, 30)), :maxMs) / 1000.0)`;

/** A status query is about to be sent for the claim: counted, and the next one due after the back-off. */
export async function noteClaimStatusQuery(claimId: string, backoff: StatusQueryBackoff): Promise<void> {
  await models().query(`UPDATE deposit_claims SET ${NEXT_STATUS_QUERY} WHERE id = :claimId`, {
    replacements: { claimId, ...backoff },
  });
}

/**
 * Take the paybill claims still `checking` whose next status query is due (at most `take`, the longest
 * waiting first), counting the query about to be sent and pushing the next one out by the back-off, in one
 * statement: of two re-askers at once, each claim is taken by one.
 */
export async function takeClaimsDueForStatusQuery(backoff: StatusQueryBackoff, take: number): Promise<ClaimRow[]> {
  return models().query<ClaimRow>(
    `UPDATE deposit_claims SET ${NEXT_STATUS_QUERY}
      WHERE id IN (SELECT id FROM deposit_claims
                    WHERE status = 'checking' AND channel = 'mpesa_c2b' AND coalesce(next_status_query_at, '-infinity') <= now()
                    ORDER BY next_status_query_at NULLS FIRST LIMIT :take
                    FOR UPDATE SKIP LOCKED)
        AND status = 'checking' AND coalesce(next_status_query_at, '-infinity') <= now()
      RETURNING ${CLAIM_COLUMNS}`,
    { replacements: { ...backoff, take }, type: QueryTypes.SELECT },
  );
}

/** Moving a claim back into checking would make it a second record of a payment another claim records. */
export class DuplicateClaim extends Error {}

/**
 * Move a claim on, only from one of the statuses `from` (a conditional update: of two answers, one
 * moves it). Returns the claim, or undefined when it was not in one of them.
 */
export async function moveClaim(
  claimId: string,
  from: readonly ClaimStatus[],
  to: { status: ClaimStatus; reason: string | null; depositId?: string | null },
  tx?: Transaction,
): Promise<ClaimRow | undefined> {
  try {
    const [row] = await models().query<ClaimRow>(
      `UPDATE deposit_claims SET status = :status, reason = :reason, deposit_id = :depositId, updated_at = now()
        WHERE id = :claimId AND status IN (:from)
        RETURNING ${CLAIM_COLUMNS}`,
      {
        replacements: { claimId, from: [...from], status: to.status, reason: to.reason, depositId: to.depositId ?? null },
        type: QueryTypes.SELECT,
        transaction: tx,
      },
    );
    return row;
  } catch (err) {
    if (err instanceof UniqueConstraintError) throw new DuplicateClaim(`claim ${claimId} records a payment another claim records`);
    throw err;
  }
}

/** Claims not credited nor matched (rejected, checking, unconfirmed), or of one status, newest first, keyset-paged on id. */
export async function listOpenClaims(status: ClaimStatus | null, before: string | null, take: number): Promise<ClaimRow[]> {
  return models().query<ClaimRow>(
    `SELECT ${CLAIM_COLUMNS} FROM deposit_claims
      WHERE status IN (:statuses) AND (CAST(:before AS uuid) IS NULL OR id < CAST(:before AS uuid))
      ORDER BY id DESC LIMIT :take`,
    { replacements: { statuses: status ? [status] : [...OPEN_CLAIM_STATUSES], before, take }, type: QueryTypes.SELECT },
  );
}

// --- the paybill URLs' tokens: one per registration

/** Keep a new token (its hash) before its registration is sent: an answer lost on the way still leaves it known. */
export async function recordC2bToken(tokenHash: string): Promise<string> {
  const [row] = await models().query<{ id: string }>(
    `INSERT INTO c2b_url_tokens (token_hash) VALUES (:tokenHash) RETURNING id::text AS id`,
    {
      replacements: { tokenHash },
      type: QueryTypes.SELECT,
    },
  );
  return row.id;
}

/** Daraja took the registration: from now the tokens before this one have their grace period only. */
export async function markC2bTokenRegistered(id: string): Promise<void> {
  await models().query(`UPDATE c2b_url_tokens SET registered_at = now() WHERE id = :id AND registered_at IS NULL`, {
    replacements: { id },
  });
}

/**
 * Where a token stands: `current` while no later registration took effect, `grace` within `graceMs` of the
 * first later one that did, then `expired`; `unknown` when it was never ours.
 */
export async function c2bTokenStanding(tokenHash: string, graceMs: number): Promise<'current' | 'grace' | 'expired' | 'unknown'> {
  const [row] = await models().query<{ superseded: boolean; within_grace: boolean }>(
    `SELECT s.superseded_at IS NOT NULL AS superseded,
            coalesce(s.superseded_at > now() - make_interval(secs => :graceMs / 1000.0), false) AS within_grace
       FROM c2b_url_tokens t,
            LATERAL (SELECT min(n.registered_at) AS superseded_at FROM c2b_url_tokens n
                      WHERE n.id > t.id AND n.registered_at IS NOT NULL) s
      WHERE t.token_hash = :tokenHash`,
    { replacements: { tokenHash, graceMs }, type: QueryTypes.SELECT },
  );
  if (!row) return 'unknown';
  if (!row.superseded) return 'current';
  return row.within_grace ? 'grace' : 'expired';
}

/** A bank-transfer payout by the reference the rail knows it by (the one a return names). */
export async function bankPayoutByRailReference(railReference: string): Promise<{ id: string } | undefined> {
  const [row] = await models().query<{ id: string }>(
    `SELECT id FROM orders WHERE method = 'bank_transfer' AND rail_reference = :railReference ORDER BY created_at DESC LIMIT 1`,
    { replacements: { railReference }, type: QueryTypes.SELECT },
  );
  return row;
}
