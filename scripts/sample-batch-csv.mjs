#!/usr/bin/env node
// A bulk payout CSV for trying batches on the sandbox (README "Bulk payouts"):
//
//   node scripts/sample-batch-csv.mjs [rows] [amount] > batch.csv
//
// `rows` (default 10000, at most 10000) M-Pesa payouts of `amount` KES each (default "4.00"), one per line
// after the header `reference,amount,currency,method,destination.provider,destination.phone,description`, each
// to its own phone number from +254710000001 up: numbers with no sandbox magic (README "Sandbox magic values"),
// so every payout completes. Plain Node ESM with no npm dependencies.

import process from 'node:process';

const [rowsArg = '10000', amountArg = '4.00'] = process.argv.slice(2);
const rows = Number(rowsArg);
if (!Number.isInteger(rows) || rows < 1 || rows > 10_000) {
  process.stderr.write('rows must be a whole number from 1 to 10000\n');
  process.exit(2);
}
if (!/^\d{1,9}(\.\d{1,2})?$/.test(amountArg) || Number(amountArg) <= 0) {
  process.stderr.write('amount must be a positive KES amount such as 4.00\n');
  process.exit(2);
}
const amount = Number(amountArg).toFixed(2);

const lines = ['reference,amount,currency,method,destination.provider,destination.phone,description'];
for (let i = 1; i <= rows; i += 1) {
  const n = String(i).padStart(5, '0');
  const phone = `+25471${String(i).padStart(7, '0')}`;
  lines.push(`SAMPLE-${n},${amount},KES,mobile_money,mpesa,${phone},"Sample payout ${n}, sandbox"`);
}
process.stdout.write(`${lines.join('\r\n')}\r\n`);
