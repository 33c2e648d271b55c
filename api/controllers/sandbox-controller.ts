import { Body, Controller, Post, Response, Route, Security, SuccessResponse, Tags, OperationId } from 'tsoa';
import type { Problem } from '../problem';
import type { Uuid } from '../schema-types';
import { simulateBankCredit, simulateC2b, simulateCryptoDeposit, type SimulatedArrival } from '../../services/sandbox-money-service';

interface SandboxC2bBody {
  /**
   * The user's `deposit_reference` (from `GET /wallets`), as the paybill account number.
   * @maxLength 64
   * @example "PG7K2M9QX4TR"
   */
  deposit_reference: string;
  /**
   * KES, as a decimal string.
   * @example "2000.00"
   * @maxLength 64
   */
  amount: string;
  /**
   * The payer's phone: a Kenyan number in E.164.
   * @pattern ^\+254[17][0-9]{8}$
   * @example "+254712345678"
   * @maxLength 20
   */
  phone: string;
}

interface SandboxBankCreditBody {
  /**
   * The user's `deposit_reference`, as the transfer's narrative.
   * @maxLength 64
   */
  deposit_reference: string;
  /**
   * KES, as a decimal string.
   * @maxLength 64
   */
  amount: string;
  /** @maxLength 200 */
  payer_name?: string;
}

interface SandboxCryptoDepositBody {
  user_id: Uuid;
  /**
   * USDT, USDC, BTC or ETH.
   * @maxLength 10
   */
  currency: string;
  /**
   * A decimal string with the asset's scale.
   * @maxLength 64
   */
  amount: string;
}

/**
 * Sandbox simulators for money in (admin only): each makes money arrive as its provider would report it,
 * through the same crediting code the real rail uses, and answers with the provider transaction id it made
 * up. They are served only while every rail is the sandbox (404 otherwise).
 */
@Route('sandbox')
@Tags('Sandbox')
@Security('jwt', ['admin'])
export class SandboxController extends Controller {
  /**
   * An M-Pesa paybill (C2B) payment quoting a deposit reference; an unknown reference stays unmatched.
   * @summary Simulate an M-Pesa paybill payment
   */
  @Post('c2b')
  @SuccessResponse(202, 'Arrived')
  @Response<Problem>(400, 'Bad amount')
  @Response<Problem>(403, 'Not an admin')
  @OperationId('simulateC2bPayment')
  public async c2b(@Body() body: SandboxC2bBody): Promise<SimulatedArrival> {
    this.setStatus(202);
    return simulateC2b(body);
  }

  /**
   * A bank transfer into the primary bank's collection account quoting a deposit reference.
   * @summary Simulate a bank credit
   */
  @Post('bank-credits')
  @SuccessResponse(202, 'Arrived')
  @Response<Problem>(400, 'Bad amount')
  @Response<Problem>(403, 'Not an admin')
  @OperationId('simulateBankCredit')
  public async bankCredit(@Body() body: SandboxBankCreditBody): Promise<SimulatedArrival> {
    this.setStatus(202);
    return simulateBankCredit(body);
  }

  /**
   * A confirmed crypto deposit to a user's deposit address.
   * @summary Simulate a crypto deposit
   */
  @Post('crypto-deposits')
  @SuccessResponse(202, 'Arrived')
  @Response<Problem>(400, 'Bad currency or amount')
  @Response<Problem>(403, 'Not an admin')
  @Response<Problem>(404, 'No such user')
  @OperationId('simulateCryptoDeposit')
  public async cryptoDeposit(@Body() body: SandboxCryptoDepositBody): Promise<SimulatedArrival> {
    this.setStatus(202);
    return simulateCryptoDeposit(body);
  }
}
