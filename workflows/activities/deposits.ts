import { config } from '../../platform/config';
import { componentLogger } from '../../platform/logger';
import { Screener } from '../../domain/compliance/screening';
import type { Currency } from '../../domain/money';
import {
  SUSPENSE_COMPLIANCE,
  SUSPENSE_UNMATCHED,
  depositLines,
  normaliseDepositReference,
  type DepositChannel,
  type DepositStatus,
} from '../../domain/wallets';
import { blocklistChangesSince, recordScreeningHit } from '../../repositories/compliance';
import { recordDeposit, type DepositRow } from '../../repositories/deposits';
import { postLines } from '../../repositories/ledger';
import { inTransaction } from '../../repositories/transaction';
import { userByDepositReference } from '../../repositories/users';

/**
 * Money in (SPEC §11): the one crediting path every way in goes through — a paybill confirmation, a bank
 * statement line, a crypto deposit, a confirmed STK Push, or a sandbox simulator — in whichever process
 * learns of it (the api for callbacks, the jobs process for statement and deposit polls, the worker for
 * STK Push deposits).
 */

const log = componentLogger('money-in');

/** Money a rail says has arrived, as its connector (or the sandbox simulator) reports it. */
export interface IncomingMoney {
  channel: DepositChannel;
  /** The connector: `sandbox`, `daraja`, `jenga`, `ccxt`. */
  rail: string;
  /** The provider's transaction id: the deposit is credited once per (channel, this). */
  providerReference: string;
  currency: Currency;
  amountMinor: bigint;
  /** Who it is for: a user id (crypto sub-addresses) or the deposit reference the payer quoted. */
  userId?: string;
  quotedReference?: string;
  payer: { phone?: string | null; name?: string | null; address?: string | null };
}

let shared: Screener | undefined;

/** This process's screener for payers: the blocklist in memory, brought up to date before each screening. */
function screener(): Screener {
  shared ??= new Screener(blocklistChangesSince, { nameThreshold: config().compliance.screeningNameThreshold });
  return shared;
}

/**
 * Credit money that has arrived, exactly once per provider transaction: a repeat of the same (channel,
 * provider reference) returns the deposit it made the first time and moves nothing. The payer is screened
 * first; on a blocklist hit the money waits in `suspense:compliance` (status `held`, with the hit recorded
 * for staff) instead of reaching the wallet. A reference nobody has leaves it in `suspense:unmatched`
 * (status `unmatched`) for staff to assign.
 */
export async function recordMoneyIn(incoming: IncomingMoney): Promise<{ row: DepositRow; created: boolean }> {
  const owner =
    incoming.userId ??
    (incoming.quotedReference ? (await userByDepositReference(normaliseDepositReference(incoming.quotedReference)))?.id : undefined);
  const [hit] = await screener().screen([
    { field: 'payer.phone', type: 'phone', value: incoming.payer.phone },
    { field: 'payer.name', type: 'name', value: incoming.payer.name },
    { field: 'payer.address', type: 'crypto_address', value: incoming.payer.address },
  ]);
  const status: DepositStatus = hit ? 'held' : owner ? 'completed' : 'unmatched';
  const result = await inTransaction(async (tx) => {
    const recorded = await recordDeposit(
      {
        userId: status === 'unmatched' ? null : (owner ?? null),
        channel: incoming.channel,
        rail: incoming.rail,
        currency: incoming.currency,
        amountMinor: incoming.amountMinor.toString(),
        status,
        providerReference: incoming.providerReference,
        quotedReference: incoming.quotedReference ?? null,
        payerPhone: incoming.payer.phone ?? null,
        payerName: incoming.payer.name ?? null,
        payerAddress: incoming.payer.address ?? null,
      },
      tx,
    );
    if (!recorded.created) return recorded;
    const d = recorded.row;
    const posting = { channel: d.channel, userId: d.user_id, currency: incoming.currency, amountMinor: d.amount_minor };
    if (status === 'completed') {
      await postLines(tx, { depositId: d.id, kind: 'deposit', currency: d.currency, lines: depositLines('deposit', posting) });
    } else {
      const suspense = status === 'held' ? SUSPENSE_COMPLIANCE : SUSPENSE_UNMATCHED;
      await postLines(tx, {
        depositId: d.id,
        kind: 'deposit_held',
        currency: d.currency,
        lines: depositLines('deposit_held', posting, suspense),
      });
    }
    if (hit) await recordScreeningHit({ context: 'deposit', match: hit, userId: d.user_id, depositId: d.id }, tx);
    return recorded;
  });
  if (result.created) {
    log.info(
      { depositId: result.row.id, channel: incoming.channel, rail: incoming.rail, status: result.row.status, userId: result.row.user_id },
      'money in recorded',
    );
  }
  return result;
}
