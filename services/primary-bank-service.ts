import { config } from '../platform/config';
import { AppError } from '../platform/errors';
import { RailError, type AccountBalance, type Balances, type BankStatementLine, type Statements } from '../connectors';
import { railConnectors } from './connectors';

export interface PrimaryBankBalance extends AccountBalance {
  bank_code: string;
  connector: string;
  checked_at: string;
}

export interface PrimaryBankTransactions {
  bank_code: string;
  connector: string;
  data: BankStatementLine[];
}

/** The primary bank's capability, which the sandbox bank rail has not. */
function primaryBank<T extends Balances | Statements>(capability: T | null): T {
  if (!capability) {
    throw new AppError(
      'dependency_unavailable',
      'the primary bank is the sandbox rail: balance and transactions need RAIL_BANK_TRANSFER=jenga',
    );
  }
  return capability;
}

async function ask<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof RailError) throw new AppError('dependency_unavailable', `the primary bank did not answer: ${err.failureCode}`);
    throw err;
  }
}

export async function primaryBankBalance(): Promise<PrimaryBankBalance> {
  const bank = primaryBank(railConnectors().bankBalance);
  const balance = await ask(() => bank.balance());
  return { ...balance, bank_code: config().discovery.primaryBankCode, connector: bank.name, checked_at: new Date().toISOString() };
}

export async function primaryBankTransactions(): Promise<PrimaryBankTransactions> {
  const bank = primaryBank(railConnectors().bankStatement);
  const data = await ask(() => bank.miniStatement());
  return { bank_code: config().discovery.primaryBankCode, connector: bank.name, data };
}
