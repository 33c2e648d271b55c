import { QueryTypes, type Transaction } from 'sequelize';
import { Exchange, models } from '../models';

/**
 * The platform catalogue: every read and write of `exchanges`, `banks` and `catalogue_refreshes`.
 */

/** The exchange's last known status, or null when the catalogue does not list it. */
export async function exchangeStatus(exchangeId: string): Promise<string | null> {
  const exchange = await Exchange.findByPk(exchangeId, { attributes: ['status'], raw: true });
  return exchange?.status ?? null;
}

/** When each catalogue last refreshed (metrics). */
export async function catalogueRefreshTimes(tx?: Transaction): Promise<{ catalogue: string; refreshed_at: Date }[]> {
  return models().query<{ catalogue: string; refreshed_at: Date }>('SELECT catalogue, refreshed_at FROM catalogue_refreshes', {
    type: QueryTypes.SELECT,
    transaction: tx,
  });
}
