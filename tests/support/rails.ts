import { rows } from './db';
import { currentRailFakes } from './stack';

/**
 * What the tests need to know about the rails in use: the sandbox (the default), or, under TEST_RAILS=real,
 * the real connectors pointed at the provider fakes (Jenga for bank transfers, Daraja B2C for M-Pesa, ccxt
 * against a local Binance for crypto). The behaviour asserted is the same; only the provider's own
 * artefacts and magic inputs differ.
 */
export const realRails = process.env.TEST_RAILS === 'real';

/** The connector per method, as /readyz reports it. */
export const expectedRails: Record<string, string> = realRails
  ? { bank_transfer: 'jenga', mobile_money: 'daraja', crypto: 'ccxt' }
  : { bank_transfer: 'sandbox', mobile_money: 'sandbox', crypto: 'sandbox' };

/** The shape of a mobile-money rail reference: the sandbox's own, or the ConversationID of Daraja's B2C payout. */
export const mobileMoneyReference = realRails ? /^AG_\d{8}_/ : /^SBX-/;

/** A seller's M-Pesa number that the rail pays normally. */
export const SELLER_PHONE = '+254712345678';

/**
 * How a mobile-money leg is made to fail with `insufficient_funds`: the sandbox's `.13` cents, or, as M-Pesa
 * takes whole shillings, the number Daraja answers ResultCode 1 for (the sandbox honours it too).
 */
export const insufficientFunds = realRails
  ? { what: 'a phone answering M-Pesa 1', cents: '00', phone: '+254700000001' }
  : { what: 'an amount with .13 cents', cents: '13', phone: SELLER_PHONE };

/** The references of the transfers the mobile-money provider recorded for an order. */
export async function mobileMoneyTransfersOf(orderId: string): Promise<string[]> {
  const fakes = currentRailFakes();
  if (realRails && fakes) {
    return [...fakes.daraja.payouts.values()].filter((p) => p.originator === orderId).map((p) => p.conversation);
  }
  const transfers = await rows<{ reference: string }>('SELECT reference FROM sandbox_transfers WHERE idempotency_key = :orderId', {
    orderId,
  });
  return transfers.map((t) => t.reference);
}
