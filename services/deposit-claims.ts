import { BlockList, isIP } from 'node:net';
import { createHash, randomBytes } from 'node:crypto';
import { config, isLoopbackHost, type Config } from '../platform/config';
import { AppError, notFound } from '../platform/errors';
import { isUuid } from '../platform/ids';
import { componentLogger } from '../platform/logger';
import { formatAmount, type Currency } from '../domain/money';
import { normaliseDepositReference } from '../domain/wallets';
import {
  parseC2bNotification,
  readC2bStatusResult,
  verifyC2bStatusToken,
  type C2bNotification,
  type DarajaResult,
} from '../connectors/daraja';
import { str } from '../connectors/provider-http';
import {
  c2bTokenStanding,
  DuplicateClaim,
  findClaim,
  listOpenClaims,
  markC2bTokenRegistered,
  moveClaim,
  noteClaimStatusQuery,
  recordC2bToken,
  recordClaim,
  recordClaimStatusQuery,
  takeClaimsDueForStatusQuery,
  type ClaimRow,
  type ClaimStatus,
  type StatusQueryBackoff,
} from '../repositories/deposit-claims';
import { railConnectors } from './connectors';
import { recordMoneyIn } from './money-in';
import { filterOneOf, keysetPage, keysetQuery, type Page } from './paging';

/**
 * Money in is proven before it is credited (docs/wallets.md#money-in-is-proven). A paybill (C2B)
 * confirmation is taken only from Safaricom's callback addresses and with the token of a current (or
 * recently replaced) URL registration; it is then recorded as a claim and Daraja's Transaction Status query
 * is asked about its receipt. Only the rail's answer, confirming the amount and our shortcode (and the
 * account when it names one), credits the wallet. Whatever is refused or not confirmed stays a claim, listed
 * for staff (`GET /wallets/unproven-deposits`), and is never credited by a staff member's word: staff can
 * only ask the rail again.
 */

const log = componentLogger('deposit-claims');

/** Daraja's answer shape to a C2B post. */
export interface C2bAck {
  ResultCode: number | string;
  ResultDesc: string;
}
export const C2B_ACCEPTED: C2bAck = { ResultCode: 0, ResultDesc: 'Accepted' };
export const C2B_IGNORED: C2bAck = { ResultCode: 1, ResultDesc: 'Ignored' };

const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');

let allowList: { cfg: Config; list: BlockList; loopback: boolean } | undefined;

/**
 * Whether a callback's source address (as Express read it through TRUST_PROXY) is one Daraja posts from:
 * DARAJA_CALLBACK_ALLOWED_IPS, and loopback only in a local run (development or test on a loopback HOST),
 * where the provider fakes post from this machine.
 */
export function darajaSourceAllowed(address: string | undefined): boolean {
  const cfg = config();
  if (allowList?.cfg !== cfg) {
    const list = new BlockList();
    for (const entry of cfg.daraja.callbackAllowedIps) {
      const [ip, prefix] = entry.split('/');
      const type = isIP(ip) === 6 ? 'ipv6' : 'ipv4';
      if (prefix === undefined) list.addAddress(ip, type);
      else list.addSubnet(ip, Number(prefix), type);
    }
    allowList = { cfg, list, loopback: (cfg.env === 'development' || cfg.env === 'test') && isLoopbackHost(cfg.http.host) };
  }
  if (!address) return false;
  const plain = address.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');
  if (allowList.loopback && isLoopbackHost(plain)) return true;
  const family = isIP(plain);
  return family !== 0 && allowList.list.check(plain, family === 6 ? 'ipv6' : 'ipv4');
}

/**
 * Register the paybill's URLs with Daraja (C2B RegisterURL) with a new token: kept (hashed) before it is
 * sent, so that a registration whose answer was lost still has its token known; the previous token is taken
 * for DARAJA_C2B_TOKEN_GRACE_MS after this one is registered. Null when mobile money is not on Daraja.
 */
export async function registerPaybillUrls(): Promise<{ confirmationUrl: string; validationUrl: string } | null> {
  const paybill = railConnectors().paybill;
  if (!paybill) return null;
  const token = randomBytes(24).toString('base64url');
  const id = await recordC2bToken(hashToken(token));
  const urls = await paybill.registerC2bUrls(token);
  await markC2bTokenRegistered(id);
  log.info({ shortcode: config().daraja.shortcode, registration: id }, 'paybill URLs registered with Daraja, with a new token');
  return urls;
}

/** Why a C2B post is refused at the door, or null when its address and token are good. */
async function refusalOf(sourceAddress: string | undefined, token: string | undefined): Promise<string | null> {
  if (!darajaSourceAllowed(sourceAddress)) return 'source_address_not_allowed';
  if (!token) return 'token_missing';
  const standing = await c2bTokenStanding(hashToken(token), config().daraja.c2bTokenGraceMs);
  if (standing === 'unknown') return 'token_unknown';
  if (standing === 'expired') return 'token_expired';
  return null;
}

const onDaraja = (): boolean => {
  const cfg = config();
  return cfg.rails.mobile_money === 'daraja' && cfg.daraja.callbackSecret !== '';
};

/** Whether a C2B validation may be answered: from Daraja's addresses, with a standing token. */
export async function c2bValidationTrusted(sourceAddress: string | undefined, token: string | undefined): Promise<boolean> {
  return onDaraja() && (await refusalOf(sourceAddress, token)) === null;
}

const text = (v: unknown): string | null => (typeof v === 'string' || typeof v === 'number' ? String(v).slice(0, 200) : null);

/**
 * A C2B confirmation: refused at the door (address, token) → a `rejected` claim; unreadable → a `rejected`
 * claim too; else a `checking` claim, once per (receipt, amount, account), and the rail asked about it. It
 * is answered Accepted (Daraja must not resend it) once recorded; nothing is credited until the rail says so.
 */
export async function receiveC2bConfirmation(
  sourceAddress: string | undefined,
  token: string | undefined,
  body: C2bNotification,
): Promise<C2bAck> {
  if (!onDaraja()) return C2B_IGNORED;
  const refusal = await refusalOf(sourceAddress, token);
  const payment = parseC2bNotification(body);
  if (refusal || !payment) {
    const { row } = await recordClaim({
      channel: 'mpesa_c2b',
      status: 'rejected',
      reason: refusal ?? 'unreadable_confirmation',
      providerReference: payment?.transId ?? text(body?.TransID),
      amountMinor: payment ? payment.amountMinor.toString() : null,
      accountReference: payment ? normaliseDepositReference(payment.billRef) : (text(body?.BillRefNumber) ?? ''),
      payerPhone: payment?.phone ?? text(body?.MSISDN),
      payerName: payment?.name ?? null,
      sourceAddress: sourceAddress ?? null,
      body: body ?? {},
    });
    log.warn(
      { claimId: row.id, transId: row.provider_reference, reason: row.reason, sourceAddress },
      'a C2B confirmation was refused and kept for staff',
    );
    return C2B_IGNORED;
  }
  const { row, created } = await recordClaim({
    channel: 'mpesa_c2b',
    status: 'checking',
    reason: null,
    providerReference: payment.transId,
    amountMinor: payment.amountMinor.toString(),
    accountReference: normaliseDepositReference(payment.billRef),
    payerPhone: payment.phone,
    payerName: payment.name,
    sourceAddress: sourceAddress ?? null,
    body,
  });
  // A repeat is asked about again only when its first query never reached the rail.
  if (created || (row.status === 'checking' && row.status_conversation_id === null)) await askRailAbout(row);
  else log.info({ claimId: row.id, transId: payment.transId }, 'a C2B confirmation seen before: nothing recorded again');
  return C2B_ACCEPTED;
}

const statusQueryBackoff = (): StatusQueryBackoff => {
  const { c2bStatusRecheckAfterMs, c2bStatusRecheckMaxIntervalMs } = config().wallets;
  return { afterMs: c2bStatusRecheckAfterMs, maxMs: Math.max(c2bStatusRecheckAfterMs, c2bStatusRecheckMaxIntervalMs) };
};

/**
 * Send the Transaction Status query for a claim's receipt, counted and with the next one due after the
 * back-off: a query that fails, or is never answered, leaves it `checking` (listed for staff), and the
 * `recheck-c2b-claims` job asks again.
 */
async function askRailAbout(claim: ClaimRow): Promise<boolean> {
  if (!railConnectors().paybill || !claim.provider_reference) return false;
  await noteClaimStatusQuery(claim.id, statusQueryBackoff());
  return sendStatusQuery(claim);
}

/** The query itself, for a claim already counted; the ids Daraja gave it are recorded, so only its answer is taken. */
async function sendStatusQuery(claim: ClaimRow): Promise<boolean> {
  const paybill = railConnectors().paybill;
  if (!paybill || !claim.provider_reference) return false;
  try {
    const ids = await paybill.queryC2bPayment(claim.provider_reference, claim.id);
    await recordClaimStatusQuery(claim.id, ids);
    return true;
  } catch (err) {
    log.error(
      { claimId: claim.id, transId: claim.provider_reference, err: (err as Error).message },
      'could not ask Daraja about a paybill receipt: it waits unproven, and is asked again',
    );
    return false;
  }
}

/** Claims asked about again per run of the job: the rest are due at the next. */
const RECHECK_BATCH = 100;

/**
 * The `recheck-c2b-claims` job: ask Daraja again about every paybill claim still `checking` whose next
 * status query is due (its query failed, or was never answered), the back-off doubling per query from
 * C2B_STATUS_RECHECK_AFTER_MS up to C2B_STATUS_RECHECK_MAX_INTERVAL_MS. Each due claim is taken by one
 * re-asker; whatever the answers, a receipt is credited once.
 */
export async function askAgainAboutCheckingClaims(): Promise<{ asked: number; failed: number }> {
  if (!onDaraja() || !railConnectors().paybill) return { asked: 0, failed: 0 };
  const due = await takeClaimsDueForStatusQuery(statusQueryBackoff(), RECHECK_BATCH);
  let asked = 0;
  for (const claim of due) if (await sendStatusQuery(claim)) asked += 1;
  if (due.length > 0) log.info({ asked, failed: due.length - asked }, 'asked Daraja again about paybill claims it had not answered');
  return { asked, failed: due.length - asked };
}

/**
 * The Transaction Status result for a claim, posted to its status URL: taken only with the claim's token,
 * from Daraja's addresses, and with the ids of the query Paygate sent. A confirmation of the same amount,
 * to our shortcode (and the same account when the result names one) credits the wallet once per receipt;
 * a query that failed on its own leaves it `checking`, to be asked again; anything else leaves the claim
 * `unconfirmed`, listed for staff.
 */
export async function receiveC2bStatus(
  claimId: string,
  sourceAddress: string | undefined,
  token: string | undefined,
  body: DarajaResult,
): Promise<C2bAck> {
  const cfg = config();
  if (
    !onDaraja() ||
    !isUuid(claimId) ||
    !verifyC2bStatusToken(cfg.daraja.callbackSecret, claimId, token) ||
    !darajaSourceAllowed(sourceAddress)
  ) {
    log.warn({ claimId, sourceAddress }, 'ignored a paybill status result without its token or from elsewhere');
    return C2B_IGNORED;
  }
  const claim = await findClaim(claimId);
  const result = body?.Result;
  if (
    !claim ||
    claim.status !== 'checking' ||
    !claim.provider_reference ||
    claim.amount_minor === null ||
    str(result?.ConversationID) !== claim.status_conversation_id ||
    str(result?.OriginatorConversationID) !== claim.status_originator_conversation_id
  ) {
    log.warn({ claimId }, 'ignored a paybill status result that answers no query pending for it');
    return C2B_IGNORED;
  }
  const facts = readC2bStatusResult(result, claim.provider_reference);
  if (facts.confirmed === null) {
    // The query failed on its own: nothing is said of the payment, and the claim is asked about again.
    await moveClaim(claim.id, ['checking'], { status: 'checking', reason: facts.reason });
    log.warn(
      { claimId, transId: claim.provider_reference, reason: facts.reason },
      'a paybill status query said nothing: asked again later',
    );
    return C2B_ACCEPTED;
  }
  const mismatch = !facts.confirmed
    ? facts.reason
    : facts.amountMinor === null || facts.amountMinor.toString() !== claim.amount_minor
      ? `M-Pesa reports ${facts.amountMinor === null ? 'no amount' : formatAmount(facts.amountMinor.toString(), 'KES')} for the receipt, not ${formatAmount(claim.amount_minor, 'KES')}`
      : facts.creditParty !== null && !facts.creditParty.trim().startsWith(cfg.daraja.shortcode)
        ? `M-Pesa reports the receipt paid to ${facts.creditParty}, not our shortcode`
        : facts.account !== null && normaliseDepositReference(facts.account) !== claim.account_reference
          ? `M-Pesa reports the account ${facts.account}, not ${claim.account_reference}`
          : null;
  if (mismatch) {
    await moveClaim(claim.id, ['checking'], { status: 'unconfirmed', reason: mismatch });
    log.error(
      { claimId, transId: claim.provider_reference, reason: mismatch },
      'a C2B confirmation the rail does not confirm: kept for staff, not credited',
    );
    return C2B_ACCEPTED;
  }
  await creditProvenClaim(claim);
  return C2B_ACCEPTED;
}

/** Credit a claim the rail confirmed, once per receipt, through the one crediting path. */
async function creditProvenClaim(claim: ClaimRow): Promise<void> {
  const { row, created } = await recordMoneyIn({
    channel: 'mpesa_c2b',
    rail: 'daraja',
    providerReference: claim.provider_reference ?? '',
    currency: claim.currency as Currency,
    amountMinor: BigInt(claim.amount_minor ?? '0'),
    quotedReference: claim.account_reference,
    payer: { phone: claim.payer_phone, name: claim.payer_name },
  });
  await moveClaim(claim.id, ['checking'], {
    status: 'credited',
    reason: created ? null : 'the receipt was credited before',
    depositId: row.id,
  });
  log.info({ claimId: claim.id, depositId: row.id, created }, 'a C2B payment confirmed by the rail and recorded');
}

// ---------------------------------------------------------------------------------------------
// What staff see and do

export interface UnprovenDepositView {
  claim_id: string;
  /** `rejected` (address or token refused), `checking` (the rail not asked or not answered yet), `unconfirmed` (the rail did not confirm it). */
  status: ClaimStatus;
  /** Why it is not credited: `source_address_not_allowed`, `token_expired`, `token_unknown`, `token_missing`, `unreadable_confirmation`, or the rail's words. */
  reason: string | null;
  channel: string;
  /** The receipt (TransID) or request id the post named. */
  provider_reference: string | null;
  currency: string;
  amount: string | null;
  /** The account number the payer typed (a deposit reference), or the deposit an STK payment names. */
  account_reference: string;
  payer_phone: string | null;
  payer_name: string | null;
  /** The address the post came from, as read through TRUST_PROXY. */
  source_address: string | null;
  received_at: string;
  updated_at: string;
}

const claimView = (c: ClaimRow): UnprovenDepositView => ({
  claim_id: c.id,
  status: c.status,
  reason: c.reason,
  channel: c.channel,
  provider_reference: c.provider_reference,
  currency: c.currency,
  amount: c.amount_minor === null ? null : formatAmount(c.amount_minor, c.currency as Currency),
  account_reference: c.account_reference,
  payer_phone: c.payer_phone,
  payer_name: c.payer_name,
  source_address: c.source_address,
  received_at: new Date(c.created_at).toISOString(),
  updated_at: new Date(c.updated_at).toISOString(),
});

const LISTED: readonly ClaimStatus[] = ['rejected', 'checking', 'unconfirmed'];

/** Money a rail announced that is not credited, newest first (staff). */
export async function unprovenDeposits(q: { status?: string; limit?: number; cursor?: string }): Promise<Page<UnprovenDepositView>> {
  const status = filterOneOf('status', q.status, LISTED) ?? null;
  const { limit, before } = keysetQuery(q);
  return keysetPage(await listOpenClaims(status, before, limit + 1), limit, claimView);
}

/**
 * Ask the rail again about an unproven paybill payment (staff): the claim goes back to `checking` and the
 * Transaction Status query is sent; only the rail's answer can credit it. A claim that is not a readable
 * paybill confirmation, or is already credited, is a 409.
 */
export async function recheckUnprovenDeposit(claimId: string): Promise<UnprovenDepositView> {
  const claim = await findClaim(claimId);
  if (!claim) throw notFound(`unproven deposit ${claimId}`);
  if (claim.channel !== 'mpesa_c2b' || !claim.provider_reference || claim.amount_minor === null || !LISTED.includes(claim.status)) {
    throw new AppError(
      'conflict',
      `claim ${claimId} is ${claim.status}: only a readable paybill confirmation not credited can be asked about again`,
    );
  }
  if (!railConnectors().paybill) throw new AppError('dependency_unavailable', 'mobile money is not on Daraja: there is no rail to ask');
  let moved: ClaimRow | undefined;
  try {
    moved = await moveClaim(claimId, LISTED, { status: 'checking', reason: null });
  } catch (err) {
    if (err instanceof DuplicateClaim) {
      throw new AppError('conflict', 'the same payment is already recorded by another confirmation: see that one');
    }
    throw err;
  }
  if (!moved) throw new AppError('conflict', `claim ${claimId} changed meanwhile`);
  await askRailAbout(moved);
  log.info({ claimId }, 'staff asked the rail again about an unproven deposit');
  return claimView((await findClaim(claimId)) ?? moved);
}
