import { validationError } from '../platform/errors';
import type { ValidPaymentRequest } from '../domain/payment-request';
import { bankRoute, type BankRoute } from '../domain/discovery/routing';
import { activeBank, isActiveExchange } from '../repositories/catalogue';

/**
 * Payments go only where the catalogue says Paygate can pay: a bank transfer to an active bank of the
 * registry, a crypto payment to an active exchange. Anything else is a 400 naming the field, before any
 * money is held. A bank transfer also learns here which route it takes out of the primary bank.
 */
export async function checkDestination(request: ValidPaymentRequest, primaryBankCode: string): Promise<{ route: BankRoute | null }> {
  if (request.method === 'bank_transfer') {
    const code = request.destination.bank_code ?? '';
    const bank = await activeBank(code);
    if (!bank) throw validationError('destination.bank_code', `no bank with code "${code}"; see GET /api/v1/platforms/banks`);
    const route = bankRoute({
      destinationBankCode: bank.code,
      primaryBankCode,
      destinationOnPesalink: bank.pesalink,
      currency: request.currency,
      amountMinor: request.amountMinor,
    });
    return { route };
  }
  if (request.method === 'crypto' && request.destination.exchange_id !== undefined) {
    const id = request.destination.exchange_id;
    if (!(await isActiveExchange(id)))
      throw validationError('destination.exchange_id', `no exchange "${id}"; see GET /api/v1/platforms/exchanges`);
  }
  return { route: null };
}
