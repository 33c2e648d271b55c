import { config } from '../platform/config';
import { uuidv7, isUuid } from '../platform/ids';
import { componentLogger } from '../platform/logger';
import { readAccountBalance, verifyBalanceQueryToken, type DarajaResult } from '../connectors/daraja';
import { str } from '../connectors/provider-http';
import {
  answerBalanceQuery,
  findBalanceQuery,
  latestAnsweredBalance,
  recordBalanceQuery,
  type BalanceQueryRow,
} from '../repositories/rail-balance-queries';
import { railConnectors } from './connectors';
import { C2B_ACCEPTED, C2B_IGNORED, darajaSourceAllowed, type C2bAck } from './deposit-claims';

/**
 * M-Pesa's balance (docs/wallets.md#float-reconciliation): Daraja answers an Account Balance query only by a
 * later result at our URL, so reconciliation asks, and reports the latest answer it recorded, with its time.
 */

const log = componentLogger('mpesa-balance');

/** Ask Daraja for the shortcode's balance; the answer lands at the query's URL. False when it could not be asked. */
export async function askMpesaBalance(): Promise<boolean> {
  const rail = railConnectors().mobileMoneyBalance;
  if (!rail) return false;
  const id = uuidv7();
  try {
    const ids = await rail.queryBalance(id);
    await recordBalanceQuery({ id, rail: rail.name, method: 'mobile_money', ...ids });
    return true;
  } catch (err) {
    log.warn({ err }, 'Daraja did not take an Account Balance query');
    return false;
  }
}

/** The latest balance M-Pesa answered, if any. */
export const latestMpesaBalance = (): Promise<BalanceQueryRow | undefined> => latestAnsweredBalance('daraja', 'mobile_money');

/**
 * An Account Balance result (or its queue timeout). Taken only with the query's token, from Daraja's
 * addresses, and with the ids of the query Paygate sent; anything else is acknowledged and ignored.
 */
export async function receiveMpesaBalance(
  queryId: string,
  sourceAddress: string | undefined,
  token: string | undefined,
  body: DarajaResult,
): Promise<C2bAck> {
  const cfg = config();
  if (
    cfg.rails.mobile_money !== 'daraja' ||
    cfg.daraja.callbackSecret === '' ||
    !isUuid(queryId) ||
    !verifyBalanceQueryToken(cfg.daraja.callbackSecret, queryId, token) ||
    !darajaSourceAllowed(sourceAddress)
  ) {
    log.warn({ queryId, sourceAddress }, 'ignored an account balance result without its token or from elsewhere');
    return C2B_IGNORED;
  }
  const query = await findBalanceQuery(queryId);
  const result = body?.Result;
  if (
    !query ||
    query.status !== 'pending' ||
    str(result?.ConversationID) !== query.conversation_id ||
    str(result?.OriginatorConversationID) !== query.originator_conversation_id
  ) {
    log.warn({ queryId }, 'ignored an account balance result that answers no query pending for it');
    return C2B_IGNORED;
  }
  const facts = readAccountBalance(result);
  if (facts.answered) {
    await answerBalanceQuery(queryId, {
      status: 'answered',
      currency: facts.currency,
      balanceMinor: facts.totalMinor,
      accounts: facts.accounts.map((a) => ({ name: a.name, currency: a.currency, amount_minor: a.amountMinor.toString() })),
    });
  } else {
    await answerBalanceQuery(queryId, { status: 'failed', reason: facts.reason });
    log.warn({ queryId, reason: facts.reason }, 'M-Pesa did not answer the balance');
  }
  return C2B_ACCEPTED;
}
