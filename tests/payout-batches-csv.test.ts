import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import { api, kesAvailable, newUser, uniqueKenyanPhone, type TestUser } from './support/api';
import { rows } from './support/db';
import { fundWallets } from './support/funding';
import { until } from './support/wait';
import { insufficientFunds } from './support/rails';

/**
 * Bulk payouts as CSV (docs/payments.md#a-batch-as-csv): the same endpoint takes a `text/csv` upload whose rows are
 * the items, refuses a bad header naming the column and a bad row naming `rows[N].field`, and a batch's results
 * come back as CSV, one line per item.
 */

interface Problem {
  code: string;
  detail: string;
  errors: { field: string; message: string }[];
}

interface Accepted {
  batch_id: string;
  status: string;
  item_count: number;
  skipped_count: number;
  skipped: { row: number; reference: string | null; errors: { field: string }[] }[];
}

const HEADER = 'reference,amount,currency,method,destination.provider,destination.phone,description';

const line = (reference: string, amount = '100.00', phone = uniqueKenyanPhone(), description = 'November salary') =>
  `${reference},${amount},KES,mobile_money,mpesa,${phone},${description}`;

const csvOf = (...lines: string[]) => `${lines.join('\r\n')}\r\n`;

async function payerWith(kes: bigint): Promise<TestUser> {
  const payer = await newUser({ funded: false });
  await fundWallets(payer.id, { KES: kes });
  return payer;
}

const postCsv = (user: TestUser, csv: string, query = '', key: string = randomUUID()) =>
  api().post(`/api/v1/payouts/batches${query}`).set(user.auth).set('Idempotency-Key', key).type('text/csv').send(csv);

const batchesOf = async (user: TestUser) =>
  rows<{ id: string }>('SELECT id FROM payout_batches WHERE user_id = :userId', { userId: user.id });

const ended = (user: TestUser, id: string) =>
  until(
    `batch ${id} to end`,
    async () => {
      const res = await api().get(`/api/v1/payouts/batches/${id}`).set(user.auth);
      return (res.body as { status: string }).status === 'running' ? undefined : (res.body as { status: string });
    },
    40_000,
    200,
  );

const results = (user: TestUser, id: string) => api().get(`/api/v1/payouts/batches/${id}/results.csv`).set(user.auth).buffer(true);

describe('bulk payouts as CSV', () => {
  describe('when one row of an uploaded CSV is invalid', () => {
    it('then the batch is refused whole, naming the row and field as JSON items are, and nothing is held', async () => {
      const payer = await payerWith(1_000_000n);
      const csv = csvOf(HEADER, line('A-1'), line('A-2'), line('A-3', 'ten'), line('A-4', '100.00', '12'));
      const res = await postCsv(payer, csv);
      expect(res.status, res.text).to.equal(400);
      expect((res.body as Problem).errors.map((e) => e.field)).to.deep.equal(['rows[3].amount', 'rows[4].destination.phone']);
      expect(await kesAvailable(payer)).to.equal('10000.00');
      expect(await batchesOf(payer)).to.have.length(0);
    });

    it('then with ?skip_invalid=true the other rows are sent and the invalid one is listed as skipped', async () => {
      const payer = await payerWith(1_000_000n);
      const res = await postCsv(payer, csvOf(HEADER, line('S-1'), line('S-2', '100.00', '12'), line('S-3')), '?skip_invalid=true');
      expect(res.status, res.text).to.equal(202);
      const accepted = res.body as Accepted;
      expect(accepted).to.include({ item_count: 2, skipped_count: 1 });
      expect(accepted.skipped.map((s) => [s.row, s.reference, s.errors[0].field])).to.deep.equal([[2, 'S-2', 'destination.phone']]);
      expect((await ended(payer, accepted.batch_id)).status).to.equal('completed');
      expect(await kesAvailable(payer)).to.equal('9800.00');
    });

    it('then a cell longer than its field allows is named by its row too', async () => {
      const payer = await payerWith(1_000_000n);
      const res = await postCsv(payer, csvOf(HEADER, line('L-1'), line('L-2', '100.00', uniqueKenyanPhone(), 'd'.repeat(501))));
      expect(res.status, res.text).to.equal(400);
      expect((res.body as Problem).errors.map((e) => e.field)).to.deep.equal(['rows[2].description']);
      expect(await batchesOf(payer)).to.have.length(0);
    });

    it('then a skip_invalid that is not a boolean, or in the query of a JSON body, is refused', async () => {
      const payer = await payerWith(1_000_000n);
      const res = await postCsv(payer, csvOf(HEADER, line('Q-1')), '?skip_invalid=maybe');
      expect(res.status, res.text).to.equal(400);
      expect((res.body as Problem).errors.map((e) => e.field)).to.deep.equal(['skip_invalid']);
      // A JSON body says it in its own field: the query would sit outside its idempotency fingerprint.
      const json = {
        items: [
          {
            reference: 'Q-2',
            amount: '100.00',
            currency: 'KES',
            method: 'mobile_money',
            destination: { provider: 'mpesa', phone: uniqueKenyanPhone() },
          },
        ],
      };
      const inQuery = await api()
        .post('/api/v1/payouts/batches?skip_invalid=true')
        .set(payer.auth)
        .set('Idempotency-Key', randomUUID())
        .send(json);
      expect(inQuery.status, inQuery.text).to.equal(400);
      expect((inQuery.body as Problem).errors.map((e) => e.field)).to.deep.equal(['skip_invalid']);
      expect(await batchesOf(payer)).to.have.length(0);
    });
  });

  describe('when the header is wrong', () => {
    it('then an unknown column is a 400 naming it', async () => {
      const payer = await payerWith(1_000_000n);
      const res = await postCsv(payer, csvOf(`${HEADER},destination.iban`, `${line('H-1')},KE00`));
      expect(res.status, res.text).to.equal(400);
      expect((res.body as Problem).errors.map((e) => e.field)).to.deep.equal(['header.destination.iban']);
      expect(await batchesOf(payer)).to.have.length(0);
    });

    it('then a missing required column, or one given twice, is a 400 naming it', async () => {
      const payer = await payerWith(1_000_000n);
      const missing = await postCsv(
        payer,
        csvOf('reference,currency,method,destination.provider,destination.phone', 'M-1,KES,mobile_money,mpesa,+254712345678'),
      );
      expect(missing.status, missing.text).to.equal(400);
      expect((missing.body as Problem).errors.map((e) => e.field)).to.deep.equal(['header.amount']);
      const twice = await postCsv(payer, csvOf(`${HEADER},amount`, `${line('T-1')},5.00`));
      expect(twice.status, twice.text).to.equal(400);
      expect((twice.body as Problem).errors.map((e) => e.field)).to.deep.equal(['header.amount']);
    });
  });

  describe('when the upload is not a well-formed CSV of 1 to 10,000 rows', () => {
    it('then a row with more or fewer fields than the header is refused, naming the row', async () => {
      const payer = await payerWith(1_000_000n);
      const res = await postCsv(payer, csvOf(HEADER, line('R-1'), `${line('R-2')},extra`, line('R-3')));
      expect(res.status, res.text).to.equal(400);
      expect((res.body as Problem).errors.map((e) => e.field)).to.deep.equal(['rows[2]']);
    });

    it('then an unclosed quote, a header alone, or 10,001 rows are refused and nothing is recorded', async () => {
      const payer = await payerWith(1_000_000n);
      const unclosed = await postCsv(payer, csvOf(HEADER, line('U-1', '100.00', uniqueKenyanPhone(), '"never closed')));
      expect(unclosed.status, unclosed.text).to.equal(400);
      expect((unclosed.body as Problem).errors.map((e) => e.field)).to.deep.equal(['body']);
      const headerOnly = await postCsv(payer, csvOf(HEADER));
      expect(headerOnly.status, headerOnly.text).to.equal(400);
      expect((headerOnly.body as Problem).errors.map((e) => e.field)).to.deep.equal(['rows']);
      const many = csvOf(HEADER, ...Array.from({ length: 10_001 }, (_, i) => line(`N-${i + 1}`, '1.00', '+254712345678')));
      const tooMany = await postCsv(payer, many);
      expect(tooMany.status, tooMany.text).to.equal(400);
      expect((tooMany.body as Problem).errors.map((e) => e.field)).to.deep.equal(['rows']);
      expect(await batchesOf(payer)).to.have.length(0);
    });

    it('then a CSV over 5 MB is 413 payload_too_large', async () => {
      const payer = await payerWith(1_000_000n);
      const padding = 'x'.repeat(400);
      const big = csvOf(HEADER, ...Array.from({ length: 13_500 }, (_, i) => line(`B-${i}`, '1.00', '+254712345678', padding)));
      expect(big.length).to.be.greaterThan(5 * 1024 * 1024);
      const res = await postCsv(payer, big);
      expect(res.status, res.text.slice(0, 500)).to.equal(413);
      expect((res.body as Problem).code).to.equal('payload_too_large');
    });
  });

  describe('when the same items are sent as CSV and as JSON', () => {
    it('then both batches hold the same items, and quotes, commas and line breaks in a description survive', async () => {
      const payer = await payerWith(1_000_000n);
      const phones = [uniqueKenyanPhone(), uniqueKenyanPhone(), uniqueKenyanPhone()];
      const descriptions = ['Salary, November', 'The "big" bonus', 'Two\nlines'];
      const json = {
        items: phones.map((phone, i) => ({
          reference: `SAME-${i + 1}`,
          amount: '120.50',
          currency: 'KES',
          method: 'mobile_money',
          destination: { provider: 'mpesa', phone },
          description: descriptions[i],
        })),
      };
      const quoted = (s: string) => `"${s.replace(/"/g, '""')}"`;
      // Columns in another order than the JSON's fields, and CRLF line ends: neither matters.
      const csv = csvOf(
        'description,destination.phone,destination.provider,method,currency,amount,reference',
        ...phones.map((phone, i) => `${quoted(descriptions[i])},${phone},mpesa,mobile_money,KES,120.50,SAME-${i + 1}`),
      );
      const fromCsv = await postCsv(payer, csv);
      expect(fromCsv.status, fromCsv.text).to.equal(202);
      const fromJson = await api().post('/api/v1/payouts/batches').set(payer.auth).set('Idempotency-Key', randomUUID()).send(json);
      expect(fromJson.status, fromJson.text).to.equal(202);
      const itemsOf = (batchId: string) =>
        rows<{ row_number: number; reference: string; method: string; amount_minor: string; fee_minor: string; body: unknown }>(
          'SELECT row_number, reference, method, amount_minor::text, fee_minor::text, body FROM payout_batch_items WHERE batch_id = :batchId ORDER BY row_number',
          { batchId },
        );
      const csvItems = await itemsOf((fromCsv.body as Accepted).batch_id);
      expect(csvItems).to.have.length(3);
      expect(csvItems).to.deep.equal(await itemsOf((fromJson.body as Accepted).batch_id));
      expect(csvItems.map((i) => (i.body as { description: string }).description)).to.deep.equal(descriptions);
      await ended(payer, (fromCsv.body as Accepted).batch_id);
      await ended(payer, (fromJson.body as Accepted).batch_id);
    });
  });

  describe('when a CSV upload is retried with the same Idempotency-Key', () => {
    it('then the same batch answers, and the same key with another skip_invalid is refused as reused', async () => {
      const payer = await payerWith(1_000_000n);
      const key = randomUUID();
      const csv = csvOf(HEADER, line('K-1'), line('K-2'));
      const first = await postCsv(payer, csv, '', key);
      expect(first.status, first.text).to.equal(202);
      const again = await postCsv(payer, csv, '', key);
      expect(again.status, again.text).to.equal(202);
      expect((again.body as Accepted).batch_id).to.equal((first.body as Accepted).batch_id);
      const other = await postCsv(payer, csv, '?skip_invalid=true', key);
      expect(other.status, other.text).to.equal(422);
      expect((other.body as Problem).code).to.equal('idempotency_key_reused');
      await ended(payer, (first.body as Accepted).batch_id);
      expect(await batchesOf(payer)).to.have.length(1);
    });
  });

  describe('when a batch has ended', () => {
    it('then its results CSV has a line per item in row order with its outcome, and is 404 to another user', async () => {
      const payer = await payerWith(1_000_000n);
      const failingAmount = `100.${insufficientFunds.cents}`;
      const csv = csvOf(HEADER, line('=SUM(A1)'), line('RES-2', failingAmount, insufficientFunds.phone), line('RES-3', '250.00'));
      const res = await postCsv(payer, csv);
      expect(res.status, res.text).to.equal(202);
      const id = (res.body as Accepted).batch_id;
      await ended(payer, id);

      const got = await results(payer, id);
      expect(got.status, got.text).to.equal(200);
      expect(got.headers['content-type']).to.match(/^text\/csv/);
      expect(got.headers['content-disposition']).to.equal(`attachment; filename="payout-batch-${id}-results.csv"`);
      const table = parse(got.text);
      expect(table[0]).to.deep.equal(['row', 'reference', 'status', 'amount', 'fee', 'order_id', 'failure_code', 'updated_at']);
      const [, ...lines] = table;
      // A reference a spreadsheet would run as a formula is kept as text.
      expect(lines.map((l) => l.slice(0, 5))).to.deep.equal([
        ['1', "'=SUM(A1)", 'completed', '100.00', '0.00'],
        ['2', 'RES-2', 'failed', failingAmount, '0.00'],
        ['3', 'RES-3', 'completed', '250.00', '0.00'],
      ]);
      expect(lines.map((l) => l[6])).to.deep.equal(['', 'insufficient_funds', '']);
      const orders = await rows<{ id: string; reference: string }>(
        `SELECT o.id, i.reference FROM payout_batch_items i JOIN orders o ON o.id = i.order_id WHERE i.batch_id = :id ORDER BY i.row_number`,
        { id },
      );
      expect(lines.map((l) => l[5])).to.deep.equal(orders.map((o) => o.id));
      expect(lines.every((l) => !Number.isNaN(Date.parse(l[7])))).to.equal(true);

      const other = await newUser({ funded: false });
      const theirs = await results(other, id);
      expect(theirs.status).to.equal(404);
      expect((theirs.body as Problem).code).to.equal('not_found');
      expect((await results(payer, randomUUID())).status).to.equal(404);
    });

    it('then a results CSV pages through more items than one read', async () => {
      const payer = await payerWith(10_000_000n);
      const many = Array.from({ length: 501 }, (_, i) => line(`PG-${i + 1}`, '1.00', '+254712345678'));
      const res = await postCsv(payer, csvOf(HEADER, ...many));
      expect(res.status, res.text).to.equal(202);
      const id = (res.body as Accepted).batch_id;
      const got = await results(payer, id);
      expect(got.status).to.equal(200);
      const [, ...lines] = parse(got.text);
      expect(lines.map((l) => Number(l[0]))).to.deep.equal(Array.from({ length: 501 }, (_, i) => i + 1));
      expect(lines.map((l) => l[1])).to.deep.equal(Array.from({ length: 501 }, (_, i) => `PG-${i + 1}`));
      await api().post(`/api/v1/payouts/batches/${id}/cancel`).set(payer.auth).set('Idempotency-Key', randomUUID());
      await until(
        `batch ${id} to end`,
        async () => {
          const b = await api().get(`/api/v1/payouts/batches/${id}`).set(payer.auth);
          return (b.body as { status: string }).status === 'running' ? undefined : true;
        },
        120_000,
        500,
      );
    });
  });
});
