import { randomInt, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { temporalClient } from '../platform/temporal';
import { paymentStageQuery } from '../workflows/shared';
import {
  api,
  blocklist,
  initiate,
  mpesaPayment,
  newNamedUser,
  newUser,
  registerWithPassword as register,
  uniqueKenyanPhone,
  waitForOrder,
  type TestUser,
} from './support/api';
import { ledgerKindsOf, rows } from './support/db';

const freshEmail = (tag: string) => `${tag}-${randomUUID().slice(0, 8)}@example.com`;

interface HitRow {
  context: string;
  field: string;
  screened_value: string;
  entry_id: string;
  score: string;
  user_id: string | null;
  order_id: string | null;
}

function expectBlocked(res: { status: number; headers: Record<string, string>; body: unknown }): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(422);
  expect(res.headers['content-type']).to.match(/^application\/problem\+json/);
  const problem = res.body as { code: string; detail: string };
  expect(problem.code).to.equal('blocked_by_compliance');
  // No tipping off: the refusal does not say what matched.
  expect(problem.detail).to.not.match(/blocklist|entry|score/i);
}

describe('screening', () => {
  let staff: TestUser;

  before(async () => {
    staff = await newUser({ roles: ['user', 'compliance'] });
  });

  describe('when someone registers with a blocklisted e-mail', () => {
    it('then it is 422 blocked_by_compliance, in any spelling, and the hit is recorded', async () => {
      const email = freshEmail('sanctioned');
      const entry = await blocklist(staff, { type: 'email', value: email });
      expectBlocked(await register({ email: `  ${email.toUpperCase()}`, full_name: 'Odhiambo Registrant' }));
      const [hit] = await rows<HitRow>(
        `SELECT context, field, screened_value, entry_id, score FROM screening_hits WHERE entry_id = :id ORDER BY created_at DESC LIMIT 1`,
        { id: entry.entry_id },
      );
      expect(hit).to.deep.include({ context: 'registration', field: 'email', screened_value: email, score: '1.0000' });
      expect(await rows('SELECT 1 FROM users WHERE email = :email', { email })).to.have.length(0);
    });
  });

  describe('when someone registers with a blocklisted phone', () => {
    it('then it is 422 even when the phone is written in local form', async () => {
      const phone = uniqueKenyanPhone();
      await blocklist(staff, { type: 'phone', value: phone });
      const local = `0${phone.slice(4, 7)} ${phone.slice(7, 10)} ${phone.slice(10)}`;
      expectBlocked(await register({ email: freshEmail('phone'), full_name: 'Wairimu Registrant', phone: local }));
    });
  });

  describe('when a name is one letter away from a blocklisted name', () => {
    before(async () => {
      await blocklist(staff, { type: 'name', value: 'John Kamau Mwangi', reason: 'sanctioned person' });
    });

    it('then "Jon Kamau Mwangi" is caught at registration with its score', async () => {
      expectBlocked(await register({ email: freshEmail('jon'), full_name: 'Jon Kamau Mwangi' }));
      const [hit] = await rows<HitRow>(
        `SELECT h.field, h.screened_value, h.score FROM screening_hits h JOIN blocklist_entries e ON e.id = h.entry_id
          WHERE e.value = 'john kamau mwangi' AND h.screened_value = 'jon kamau mwangi' ORDER BY h.created_at DESC LIMIT 1`,
      );
      expect(hit.field).to.equal('full_name');
      expect(Number(hit.score)).to.be.within(0.92, 0.999);
    });

    it('then the same name in another order, case or spacing is caught too', async () => {
      expectBlocked(await register({ email: freshEmail('order'), full_name: 'MWANGI,  john Kamau' }));
    });

    it('then an unrelated name registers', async () => {
      const res = await register({ email: freshEmail('unrelated'), full_name: 'Grace Atieno Odhiambo' });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
    });
  });

  describe('when a payment goes to a blocklisted phone', () => {
    it('then it ends rejected with blocked_by_compliance, records the entry and score, and posts nothing', async () => {
      const phone = uniqueKenyanPhone();
      const entry = await blocklist(staff, { type: 'phone', value: phone, reason: 'mule account' });
      const payer = await newUser();
      const res = await initiate(payer, mpesaPayment({ destination: { provider: 'mpesa', phone } }));
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      const orderId = (res.body as { order_id: string }).order_id;

      const order = await waitForOrder(payer, orderId);
      expect(order.status).to.equal('rejected');
      expect(order.failure_code).to.equal('blocked_by_compliance');
      expect(order.failure_reason).to.equal('the payment was stopped by compliance screening');
      expect(order.events.map((e) => e.status)).to.deep.equal(['screening', 'rejected']);
      expect(await ledgerKindsOf(orderId)).to.deep.equal([]);

      const [recorded] = await rows<{ screening_entry_id: string; screening_score: string }>(
        'SELECT screening_entry_id, screening_score FROM orders WHERE id = :orderId',
        { orderId },
      );
      expect(recorded).to.deep.equal({ screening_entry_id: entry.entry_id, screening_score: '1.0000' });
      const hits = await rows<HitRow>(
        'SELECT context, field, screened_value, user_id, order_id, score FROM screening_hits WHERE order_id = :orderId',
        {
          orderId,
        },
      );
      expect(hits).to.deep.equal([
        { context: 'payment', field: 'destination.phone', screened_value: phone, user_id: payer.id, order_id: orderId, score: '1.0000' },
      ]);
      const result: unknown = await temporalClient().workflow.getHandle(`payment-${orderId}`).result();
      expect(result).to.deep.equal({ orderId, status: 'rejected', failureCode: 'blocked_by_compliance' });
      expect(await temporalClient().workflow.getHandle(`payment-${orderId}`).query(paymentStageQuery)).to.equal('done');
    });
  });

  describe('when a bank transfer names a blocklisted account holder with a typo', () => {
    it('then the account name is caught by the fuzzy match', async () => {
      await blocklist(staff, { type: 'name', value: 'Kipchoge Barasa Otieno', reason: 'sanctioned person' });
      const payer = await newUser();
      const res = await initiate(
        payer,
        mpesaPayment({
          method: 'bank_transfer',
          destination: { bank_code: '01', account_number: '1234567891', account_name: 'Kipchoge Barassa Otieno' },
        }),
      );
      const order = await waitForOrder(payer, (res.body as { order_id: string }).order_id);
      expect(order.status).to.equal('rejected');
      expect(order.failure_code).to.equal('blocked_by_compliance');
      const [hit] = await rows<HitRow>('SELECT field, score FROM screening_hits WHERE order_id = :id', { id: order.order_id });
      expect(hit.field).to.equal('destination.account_name');
      expect(Number(hit.score)).to.be.within(0.92, 0.999);
    });
  });

  describe('when the payer is blocklisted after registering', () => {
    it('then their next payment is rejected: every payment screens the payer too', async () => {
      const name = `Halima ${randomUUID().slice(0, 6).replace(/\d/g, 'x')} Chebet`;
      const payer = await newNamedUser(name);
      await blocklist(staff, { type: 'name', value: name });
      const res = await initiate(payer, mpesaPayment({ destination: { provider: 'mpesa', phone: uniqueKenyanPhone() } }));
      const order = await waitForOrder(payer, (res.body as { order_id: string }).order_id);
      expect(order.status).to.equal('rejected');
      expect(order.failure_code).to.equal('blocked_by_compliance');
    });
  });

  describe('when a destination is clear, or its entry has expired', () => {
    it('then the payment passes screening and completes', async () => {
      const phone = uniqueKenyanPhone();
      await blocklist(staff, { type: 'phone', value: phone, expires_at: new Date(Date.now() - 1000).toISOString() });
      const payer = await newUser();
      const res = await initiate(payer, mpesaPayment({ destination: { provider: 'mpesa', phone } }));
      const order = await waitForOrder(payer, (res.body as { order_id: string }).order_id);
      expect(order.status).to.equal('completed');
      expect(order.events.map((e) => e.status)).to.deep.equal(['screening', 'processing', 'completed']);
      expect(order.events[0].detail).to.equal('screened against the blocklist: no match');
    });
  });

  describe('when a listed name is written in another script', () => {
    // A suffix of letters that are spelled one for one in Latin and Cyrillic keeps one run's names apart
    // from another's (no c, h, j, x or y: ц, х, й, кс and ы are not one Latin letter each).
    const LATIN = 'abdfklmnoprt';
    const CYRILLIC = 'абдфклмнопрт';
    const picks = Array.from({ length: 4 }, () => randomInt(LATIN.length));
    const tag = picks.map((i) => LATIN[i]).join('');
    const cyrillicTag = picks.map((i) => CYRILLIC[i]).join('');
    before(async () => {
      await blocklist(staff, { type: 'name', value: `Dmitriy Sergeyevich Zhuravlyov${tag}`, reason: 'listed in Latin letters' });
      await blocklist(staff, { type: 'name', value: 'Nasser Hamdan al-Mutairi', reason: 'listed in Latin letters' });
      await blocklist(staff, { type: 'name', value: 'Cao Zhenhua', reason: 'listed in Latin letters' });
      await blocklist(staff, { type: 'name', value: `Светлана Андреевна Кудрявцева${cyrillicTag}`, reason: 'listed in Cyrillic' });
    });

    it('then its Cyrillic, Arabic and Chinese spellings are refused at registration', async () => {
      expectBlocked(await register({ email: freshEmail('cyr'), full_name: `Дмитрий Сергеевич Журавлёв${cyrillicTag}` }));
      expectBlocked(await register({ email: freshEmail('ara'), full_name: 'ناصر حمدان المطيري' }));
      expectBlocked(await register({ email: freshEmail('zho'), full_name: '曹振华' }));
      const [hit] = await rows<{ screened_value: string; value: string; score: string }>(
        `SELECT h.screened_value, e.value, h.score FROM screening_hits h JOIN blocklist_entries e ON e.id = h.entry_id
          WHERE h.screened_value = '曹振华' ORDER BY h.created_at DESC LIMIT 1`,
      );
      // The hit keeps both spellings as written: the screened one and the listed one.
      expect(hit).to.deep.include({ screened_value: '曹振华', value: 'cao zhenhua' });
    });

    it('then the Latin spelling of a name listed in Cyrillic is refused too', async () => {
      expectBlocked(await register({ email: freshEmail('lat'), full_name: `Svetlana Andreyevna Kudryavtseva${tag}` }));
    });

    it('then unrelated names in those scripts register', async () => {
      for (const fullName of ['Ольга Николаевна Смирнова', 'فاطمة علي حسن', '林美玲']) {
        const res = await register({ email: freshEmail('clear'), full_name: fullName });
        expect(res.status, `${fullName}: ${JSON.stringify(res.body)}`).to.equal(201);
      }
    });

    it('then a KYC submission is refused once the Latin spelling of the user’s Cyrillic name is listed', async () => {
      const name = `Андрей Павлович Белов${cyrillicTag}`;
      const user = await newNamedUser(name);
      await blocklist(staff, { type: 'name', value: `Andrei Pavlovich Belov${tag}` });
      const res = await api()
        .put(`/api/v1/users/${user.id}/kyc`)
        .set(user.auth)
        .send({ id_type: 'national_id', id_number: '30112233', date_of_birth: '1990-04-12' });
      expectBlocked(res);
    });

    it('then a bank transfer to an account named in Arabic script is rejected in its workflow', async () => {
      const payer = await newUser();
      const res = await initiate(
        payer,
        mpesaPayment({
          method: 'bank_transfer',
          destination: { bank_code: '01', account_number: '1234567892', account_name: 'ناصر حمدان المطيري' },
        }),
      );
      const order = await waitForOrder(payer, (res.body as { order_id: string }).order_id);
      expect(order.status).to.equal('rejected');
      expect(order.failure_code).to.equal('blocked_by_compliance');
      const [hit] = await rows<HitRow>('SELECT field, screened_value FROM screening_hits WHERE order_id = :id', { id: order.order_id });
      expect(hit).to.deep.include({ field: 'destination.account_name', screened_value: 'ناصر حمدان المطيري' });
    });
  });
});
