import { QueryTypes } from 'sequelize';
import { models } from '../models';

/**
 * Balances asked of a rail that answers later (`rail_balance_queries`, docs/wallets.md#float-reconciliation):
 * the query with the ids its answer is taken with, and the answer.
 */

export interface BalanceQueryRow {
  id: string;
  rail: string;
  method: string;
  conversation_id: string;
  originator_conversation_id: string;
  status: 'pending' | 'answered' | 'failed';
  currency: string | null;
  balance_minor: string | null;
  reason: string | null;
  requested_at: Date;
  answered_at: Date | null;
}

const COLUMNS = `id, rail, method, conversation_id, originator_conversation_id, status, currency,
  balance_minor::text AS balance_minor, reason, requested_at, answered_at`;

export async function recordBalanceQuery(q: {
  id: string;
  rail: string;
  method: string;
  conversationId: string;
  originatorConversationId: string;
}): Promise<void> {
  await models().query(
    `INSERT INTO rail_balance_queries (id, rail, method, conversation_id, originator_conversation_id)
     VALUES (:id, :rail, :method, :conversationId, :originatorConversationId)`,
    { replacements: { ...q } },
  );
}

export async function findBalanceQuery(id: string): Promise<BalanceQueryRow | undefined> {
  const [row] = await models().query<BalanceQueryRow>(`SELECT ${COLUMNS} FROM rail_balance_queries WHERE id = :id`, {
    replacements: { id },
    type: QueryTypes.SELECT,
  });
  return row;
}

/** Record a pending query's answer once; false when it was answered (or given up) already. */
export async function answerBalanceQuery(
  id: string,
  answer: { status: 'answered'; currency: string; balanceMinor: bigint; accounts: unknown } | { status: 'failed'; reason: string },
): Promise<boolean> {
  const [row] = await models().query<{ id: string }>(
    `UPDATE rail_balance_queries
        SET status = :status, currency = :currency, balance_minor = :balance, accounts = CAST(:accounts AS jsonb),
            reason = :reason, answered_at = now()
      WHERE id = :id AND status = 'pending'
      RETURNING id`,
    {
      replacements: {
        id,
        status: answer.status,
        currency: answer.status === 'answered' ? answer.currency : null,
        balance: answer.status === 'answered' ? answer.balanceMinor.toString() : null,
        accounts: answer.status === 'answered' ? JSON.stringify(answer.accounts) : null,
        reason: answer.status === 'failed' ? answer.reason.slice(0, 500) : null,
      },
      type: QueryTypes.SELECT,
    },
  );
  return row !== undefined;
}

/** The latest answered balance of a rail, if it ever answered. */
export async function latestAnsweredBalance(rail: string, method: string): Promise<BalanceQueryRow | undefined> {
  const [row] = await models().query<BalanceQueryRow>(
    `SELECT ${COLUMNS} FROM rail_balance_queries
      WHERE rail = :rail AND method = :method AND status = 'answered'
      ORDER BY answered_at DESC, id DESC LIMIT 1`,
    { replacements: { rail, method }, type: QueryTypes.SELECT },
  );
  return row;
}
