import { transfer, type LedgerLine } from '../ledger';

/**
 * The asset leg of a P2P trade in the ledger. The seller's asset is locked in `escrow:<order_id>` when
 * the trade starts, then released to the buyer once the fiat leg settled, or returned to the seller when
 * it failed or timed out. A refunded (appealed) trade mirrors the release: the buyer gives it back.
 */

export const ESCROW_KINDS = ['escrow_lock', 'escrow_release', 'escrow_return', 'escrow_reverse'] as const;
export type EscrowKind = (typeof ESCROW_KINDS)[number];

export interface EscrowAccounts {
  orderId: string;
  sellerId: string;
  buyerId: string;
  asset: string;
  assetAmountMinor: string;
}

export function escrowLines(kind: EscrowKind, t: EscrowAccounts): LedgerLine[] {
  const seller = `user:${t.sellerId}`;
  const buyer = `user:${t.buyerId}`;
  const escrow = `escrow:${t.orderId}`;
  switch (kind) {
    case 'escrow_lock':
      return transfer(seller, escrow, t.assetAmountMinor);
    case 'escrow_release':
      return transfer(escrow, buyer, t.assetAmountMinor);
    case 'escrow_return':
      return transfer(escrow, seller, t.assetAmountMinor);
    case 'escrow_reverse':
      return transfer(buyer, seller, t.assetAmountMinor);
  }
}
