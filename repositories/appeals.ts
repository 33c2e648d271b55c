import { QueryTypes, type Transaction } from 'sequelize';
import { models } from '../models';

/** Appeals against orders: every read and write of `appeals`. */

/** How many appeals there are per status (metrics). */
export async function countAppealsByStatus(tx?: Transaction): Promise<{ status: string; n: number }[]> {
  return models().query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM appeals GROUP BY status', {
    type: QueryTypes.SELECT,
    transaction: tx,
  });
}
