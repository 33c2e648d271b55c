/**
 * The types of the Temporal failures Paygate's activities and workflows raise. They are wire values: retry
 * presets list the final ones by name (`nonRetryableErrorTypes`), workflows branch on them, and the api maps
 * an appeal's refusal to its HTTP problem by them, so a value never changes. Plain constants, with no
 * imports: workflow code and activities both use this module.
 */

/** The rail refused the transfer, or it can never be asked again: final. */
export const RAIL_REJECTED = 'RailRejected';
/** The rail is busy, down or unreachable: retried by the activity's preset. */
export const RAIL_UNAVAILABLE = 'RailUnavailable';
/**
 * The rail may have the transfer, and sending it again cannot tell (it refused a repeat as a duplicate):
 * final for the submission, which the workflow follows by asking the rail, never by failing the payment.
 */
export const RAIL_OUTCOME_UNKNOWN = 'RailOutcomeUnknown';
/** The database refused a hold the payer's wallet cannot cover: final, nothing moved. */
export const INSUFFICIENT_FUNDS = 'InsufficientFunds';

export const ORDER_NOT_FOUND = 'OrderNotFound';
export const TRADE_NOT_FOUND = 'TradeNotFound';
export const DEPOSIT_NOT_FOUND = 'DepositNotFound';
export const USER_NOT_FOUND = 'UserNotFound';
export const APPEAL_NOT_FOUND = 'AppealNotFound';
export const REVIEW_NOT_FOUND = 'ReviewNotFound';

/** The request does not fit the record's state (an appeal already decided, a resolution that does not apply). */
export const CONFLICT = 'conflict';
/** The caller may not make this decision. */
export const FORBIDDEN = 'forbidden';
