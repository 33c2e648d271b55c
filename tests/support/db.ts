import { QueryTypes } from 'sequelize';
import { database } from '../../platform/database';

/** Read-only SQL for assertions. */
export async function rows<T extends object>(sql: string, replacements: Record<string, unknown> = {}): Promise<T[]> {
  return database().query<T>(sql, { replacements, type: QueryTypes.SELECT });
}

export async function ledgerKindsOf(orderId: string): Promise<string[]> {
  const found = await rows<{ kind: string }>('SELECT kind FROM ledger_transactions WHERE order_id = :orderId ORDER BY created_at', {
    orderId,
  });
  return found.map((r) => r.kind);
}
