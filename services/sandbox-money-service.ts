import { randomBytes } from 'node:crypto';
import { notFound, validationError } from '../platform/errors';
import { formatAmount, parseAmount, type Currency } from '../domain/money';
import { CRYPTO_ASSETS, isCryptoAsset } from '../domain/wallets';
import { recordSandboxArrival } from '../repositories/sandbox-transfers';
import { findUser } from '../repositories/users';
import { creditIncoming, type DepositView } from './money-in';
import { deploymentWorld } from './deployment';

/**
 * Sandbox simulators for money in (docs/wallets.md#sandbox-simulators): make money arrive as a provider would report it, through the
 * same crediting path (`creditIncoming`) a real connector's callback or statement poll uses. Each is served
 * only while every rail is the sandbox, and only to admins. The simulated provider writes each arrival to its
 * own books first, as a provider's statement would show it (docs/wallets.md#reconciliation-line-by-line).
 */

/** Each simulator's path under the API. */
export const SANDBOX_SIMULATORS: readonly string[] = ['/sandbox/c2b', '/sandbox/bank-credits', '/sandbox/crypto-deposits'];

/**
 * The simulators not served in this configuration: all of them unless every rail is the sandbox. Money a
 * simulator makes up could otherwise leave through whichever rail is real (README, "Sandbox and live").
 */
export const unservedSimulators = (): string[] => (deploymentWorld() === 'sandbox' ? [] : [...SANDBOX_SIMULATORS]);

export interface SimulatedArrival {
  /** The provider transaction id the simulator made up (M-Pesa TransID, bank reference, txid). */
  provider_reference: string;
  deposit: DepositView;
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const madeUpTransId = (): string => Array.from(randomBytes(10), (b) => ALNUM[b % ALNUM.length]).join('');

/** A C2B payment to the paybill, with `deposit_reference` as the account number (`BillRefNumber`). */
export async function simulateC2b(body: { deposit_reference: string; amount: string; phone: string }): Promise<SimulatedArrival> {
  const amountMinor = parseAmount(body.amount, 'KES');
  const transId = madeUpTransId();
  await recordSandboxArrival({
    method: 'mobile_money',
    channel: 'mpesa_c2b',
    reference: transId,
    currency: 'KES',
    amount: formatAmount(amountMinor, 'KES'),
  });
  const { deposit } = await creditIncoming({
    channel: 'mpesa_c2b',
    rail: 'sandbox',
    providerReference: transId,
    currency: 'KES',
    amountMinor,
    quotedReference: body.deposit_reference,
    payer: { phone: body.phone },
  });
  return { provider_reference: transId, deposit };
}

/** A credit to the primary bank's collection account, with `deposit_reference` in the narrative. */
export async function simulateBankCredit(body: {
  deposit_reference: string;
  amount: string;
  payer_name?: string;
}): Promise<SimulatedArrival> {
  const amountMinor = parseAmount(body.amount, 'KES');
  const reference = `SBXB${madeUpTransId()}`;
  await recordSandboxArrival({
    method: 'bank_transfer',
    channel: 'bank_transfer',
    reference,
    currency: 'KES',
    amount: formatAmount(amountMinor, 'KES'),
  });
  const { deposit } = await creditIncoming({
    channel: 'bank_transfer',
    rail: 'sandbox',
    providerReference: reference,
    currency: 'KES',
    amountMinor,
    quotedReference: body.deposit_reference,
    payer: { name: body.payer_name ?? null },
  });
  return { provider_reference: reference, deposit };
}

/** A confirmed crypto deposit to the user's deposit address on the exchange account. */
export async function simulateCryptoDeposit(body: { user_id: string; currency: string; amount: string }): Promise<SimulatedArrival> {
  if (!isCryptoAsset(body.currency)) throw validationError('currency', `must be one of ${CRYPTO_ASSETS.join(', ')}`);
  const currency: Currency = body.currency;
  const amountMinor = parseAmount(body.amount, currency);
  if (!(await findUser(body.user_id))) throw notFound(`user ${body.user_id}`);
  const txid = `0x${randomBytes(32).toString('hex')}`;
  await recordSandboxArrival({
    method: 'crypto',
    channel: 'crypto',
    reference: txid,
    currency,
    amount: formatAmount(amountMinor, currency),
  });
  const { deposit } = await creditIncoming({
    channel: 'crypto',
    rail: 'sandbox',
    providerReference: txid,
    currency,
    amountMinor,
    userId: body.user_id,
    payer: { address: `0x${randomBytes(20).toString('hex')}` },
  });
  return { provider_reference: txid, deposit };
}
