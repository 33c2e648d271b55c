import { Controller, Get, Response, Route, Security, Tags, OperationId } from 'tsoa';
import type { Problem } from '../problem';
import {
  primaryBankBalance,
  primaryBankTransactions,
  type PrimaryBankBalance,
  type PrimaryBankTransactions,
} from '../../services/primary-bank-service';

/**
 * Extension: the primary bank's `balance` and `transactions` capabilities, read live through its connector
 * (Jenga for Equity Bank: account balance and mini statement). Admins only; 503 while the primary bank is the sandbox.
 */
@Route('platforms/banks/primary')
@Tags('Platforms')
@Security('jwt', ['admin'])
export class PrimaryBankController extends Controller {
  /**
   * Available and current balance of Paygate's settlement account at the primary bank.
   * @summary Get the primary bank balance
   */
  @Get('balance')
  @Response<Problem>(403, 'Not an admin')
  @Response<Problem>(503, 'The bank did not answer, or the sandbox rail is selected')
  @OperationId('getPrimaryBankBalance')
  public async balance(): Promise<PrimaryBankBalance> {
    return primaryBankBalance();
  }

  /**
   * The latest transactions on the settlement account (the bank's mini statement).
   * @summary List primary bank transactions
   */
  @Get('transactions')
  @Response<Problem>(403, 'Not an admin')
  @Response<Problem>(503, 'The bank did not answer, or the sandbox rail is selected')
  @OperationId('listPrimaryBankTransactions')
  public async transactions(): Promise<PrimaryBankTransactions> {
    return primaryBankTransactions();
  }
}
