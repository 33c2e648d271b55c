import { config } from '../platform/config';
import { AppError } from '../platform/errors';
import { createConnectors } from '../connectors';
import { JengaConnector, type JengaBalance, type JengaStatementLine } from '../connectors/jenga';
import { RailError } from '../connectors/types';

export interface PrimaryBankBalance extends JengaBalance {
  bank_code: string;
  connector: string;
  checked_at: string;
}

export interface PrimaryBankTransactions {
  bank_code: string;
  connector: string;
  data: JengaStatementLine[];
}

let connector: JengaConnector | undefined;

function jenga(): JengaConnector {
  if (connector) return connector;
  const bank = createConnectors(config()).bank_transfer;
  if (!(bank instanceof JengaConnector)) {
    throw new AppError(
      'dependency_unavailable',
      'the primary bank is the sandbox rail: balance and transactions need RAIL_BANK_TRANSFER=jenga',
    );
  }
  connector = bank;
  return bank;
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
  const bank = jenga();
  const balance = await ask(() => bank.balance());
  return { ...balance, bank_code: config().discovery.primaryBankCode, connector: bank.name, checked_at: new Date().toISOString() };
}

export async function primaryBankTransactions(): Promise<PrimaryBankTransactions> {
  const bank = jenga();
  const data = await ask(() => bank.miniStatement());
  return { bank_code: config().discovery.primaryBankCode, connector: bank.name, data };
}
