/**
 * M-Pesa (Daraja) ResultCodes mapped to Paygate failure codes. `retryable` codes mean the provider was
 * busy and the request may be sent again.
 */
export const MPESA_RESULT_CODES: Record<string, { failureCode: string; reason: string; retryable: boolean }> = {
  '1': { failureCode: 'insufficient_funds', reason: 'the subscriber has insufficient balance', retryable: false },
  '17': { failureCode: 'provider_busy', reason: 'M-Pesa system busy', retryable: true },
  '26': { failureCode: 'provider_busy', reason: 'M-Pesa system busy', retryable: true },
  '1001': { failureCode: 'subscriber_locked', reason: 'the subscriber is locked in another transaction', retryable: false },
  '1019': { failureCode: 'transaction_expired', reason: 'the transaction expired before the subscriber answered', retryable: false },
  '1025': { failureCode: 'provider_error', reason: 'M-Pesa could not send the push request', retryable: false },
  '1032': { failureCode: 'cancelled_by_user', reason: 'the subscriber cancelled the request', retryable: false },
  '1037': { failureCode: 'subscriber_unreachable', reason: 'the subscriber handset could not be reached', retryable: false },
  '2001': { failureCode: 'invalid_pin', reason: 'a wrong PIN or wrong initiator credentials', retryable: false },
  '9999': { failureCode: 'provider_error', reason: 'M-Pesa could not send the push request', retryable: false },
};
