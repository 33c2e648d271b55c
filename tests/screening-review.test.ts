import { randomInt, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { reloadConfig } from '../platform/config';
import { temporalClient } from '../platform/temporal';
import { paymentStageQuery } from '../workflows/shared';
import { api, blocklist, initiate, mpesaPayment, newUser, waitForOrder, type OrderBody, type TestUser } from './support/api';
import { ledgerKindsOf, rows } from './support/db';
import { User } from '../models';
import { expectProblem } from './support/problems';

interface Review {
  review_id: string;
  context: string;
  user_id: string | null;
  order_id: string | null;
  field: string;
  screened_value: string;
  review_reason: string;
  status: string;
  decided_by: string | null;
  note: string | null;
  entry: { entry_id: string; value: string; source: string; external_ref: string | null };
}

/** A made-up surname no other run lists: six letters, capitalised. */
const surname = () => {
  const letters = Array.from({ length: 6 }, () => 'bcdfghjklmnprstvwz'[randomInt(18)]).join('');
  return letters[0].toUpperCase() + letters.slice(1);
};

/** A bank transfer to an account held in `accountName`. */
const transferTo = (accountName: string) =>
  mpesaPayment({ method: 'bank_transfer', destination: { bank_code: '01', account_number: '1234567893', account_name: accountName } });

async function pay(payer: TestUser, accountName: string): Promise<string> {
  const res = await initiate(payer, transferTo(accountName));
  expect(res.status, JSON.stringify(res.body)).to.equal(202);
  return (res.body as { order_id: string }).order_id;
}

const reviewsOf = async (staff: TestUser, status?: string): Promise<Review[]> => {
  const res = await api()
    .get('/api/v1/compliance/reviews')
    .set(staff.auth)
    .query({ limit: 100, ...(status ? { status } : {}) });
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return (res.body as { data: Review[] }).data;
};

/** The review a payment is held for, once its workflow has recorded it. */
async function heldReview(staff: TestUser, orderId: string): Promise<Review> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const found = (await reviewsOf(staff, 'needs_review')).find((r) => r.order_id === orderId);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no review recorded for order ${orderId}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const decide = (staff: TestUser, reviewId: string, body: Record<string, unknown>) =>
  api().post(`/api/v1/compliance/reviews/${reviewId}/decision`).set(staff.auth).send(body);

describe('screening reviews', () => {
  let staff: TestUser;
  let otherStaff: TestUser;

  before(async () => {
    staff = await newUser({ roles: ['user', 'compliance'] });
    otherStaff = await newUser({ roles: ['user', 'compliance'] });
  });

  describe('when a payment names a listed person without their middle name', () => {
    let listed: string;
    let orderId: string;
    let payer: TestUser;
    let review: Review;

    before(async function () {
      this.timeout(30_000);
      const family = surname();
      listed = `Zawadi Nyokabi ${family}`;
      await blocklist(staff, { type: 'name', value: listed, reason: 'sanctioned person' });
      payer = await newUser();
      orderId = await pay(payer, `Zawadi ${family}`);
      review = await heldReview(staff, orderId);
    });

    it('then the payment is neither passed nor blocked: it waits in screening for a decision, holding nothing', async () => {
      const order = (await api().get(`/api/v1/payments/orders/${orderId}`).set(payer.auth)).body as OrderBody;
      expect(order.status).to.equal('screening');
      expect(order.events.map((e) => [e.status, e.detail])).to.deep.equal([
        ['screening', 'screened against the blocklist: held for compliance review (dropped_name)'],
      ]);
      expect(await temporalClient().workflow.getHandle(`payment-${orderId}`).query(paymentStageQuery)).to.equal('awaiting_review');
      expect(await ledgerKindsOf(orderId)).to.deep.equal([]);
    });

    it('then staff see the review with both spellings, the reason, and the listed entry with its list', () => {
      expect(review).to.deep.include({
        context: 'payment',
        user_id: payer.id,
        order_id: orderId,
        field: 'destination.account_name',
        screened_value: review.screened_value,
        review_reason: 'dropped_name',
        status: 'needs_review',
      });
      expect(review.screened_value).to.match(/^zawadi [a-z]{6}$/);
      expect(review.entry).to.deep.include({ value: listed.toLowerCase(), source: 'manual' });
    });

    it('then clearing it lets the payment complete, and the same pair passes from then on without a review', async function () {
      this.timeout(30_000);
      const cleared = await decide(otherStaff, review.review_id, { decision: 'clear', note: 'different person, checked ID' });
      expect(cleared.status, JSON.stringify(cleared.body)).to.equal(200);
      expect(cleared.body).to.deep.include({ status: 'cleared', decided_by: otherStaff.id, note: 'different person, checked ID' });
      const order = await waitForOrder(payer, orderId);
      expect(order.status).to.equal('completed');

      expectProblem(await decide(otherStaff, review.review_id, { decision: 'confirm' }), 409, 'conflict');

      const again = await waitForOrder(
        payer,
        await pay(
          payer,
          review.screened_value.replace(/\b\w/g, (c) => c.toUpperCase()),
        ),
      );
      expect(again.status).to.equal('completed');
      expect(again.events[0].detail).to.equal('screened against the blocklist: no match');
    });
  });

  describe('when staff confirm a review', () => {
    it('then the held payment is rejected with blocked_by_compliance, and the same pair is blocked at once next time', async function () {
      this.timeout(30_000);
      const family = surname();
      await blocklist(staff, { type: 'name', value: `Baraka Mutiso ${family}` });
      const payer = await newUser();
      const orderId = await pay(payer, `B. M. ${family}`);
      const review = await heldReview(staff, orderId);
      expect(review.review_reason).to.equal('initials');

      const confirmed = await decide(staff, review.review_id, { decision: 'confirm' });
      expect(confirmed.status, JSON.stringify(confirmed.body)).to.equal(200);
      const order = await waitForOrder(payer, orderId);
      expect(order).to.deep.include({ status: 'rejected', failure_code: 'blocked_by_compliance' });
      expect(order.failure_reason).to.equal('the payment was stopped by compliance screening');
      expect(order.events.map((e) => [e.status, e.detail])).to.deep.equal([
        ['screening', 'screened against the blocklist: held for compliance review (initials)'],
        ['rejected', 'compliance review: match confirmed'],
      ]);
      expect(await ledgerKindsOf(orderId)).to.deep.equal([]);

      const next = await waitForOrder(payer, await pay(payer, `B. M. ${family}`));
      expect(next).to.deep.include({ status: 'rejected', failure_code: 'blocked_by_compliance' });
      expect(next.events.map((e) => e.detail)).to.deep.equal([
        'screened against the blocklist: match',
        'blocked_by_compliance: the payment was stopped by compliance screening',
      ]);
    });
  });

  describe('when nobody decides within the SLA', () => {
    it('then the payment is rejected, the review expires, and a late decision is 409', async function () {
      this.timeout(30_000);
      const family = surname();
      await blocklist(staff, { type: 'name', value: `Imani Chepkoech ${family}` });
      const payer = await newUser();
      process.env.SCREENING_REVIEW_SLA_MS = '1500';
      reloadConfig();
      let orderId: string;
      try {
        orderId = await pay(payer, `Imani ${family}`);
      } finally {
        delete process.env.SCREENING_REVIEW_SLA_MS;
        reloadConfig();
      }
      const order = await waitForOrder(payer, orderId);
      expect(order).to.deep.include({ status: 'rejected', failure_code: 'blocked_by_compliance' });
      expect(order.failure_reason).to.equal('the payment was held for a compliance check that was not completed in time');
      expect(order.events.map((e) => e.detail)).to.include('compliance review: not decided within its SLA');
      const [review] = (await reviewsOf(staff, 'expired')).filter((r) => r.order_id === orderId);
      expect(review.status).to.equal('expired');
      expectProblem(await decide(staff, review.review_id, { decision: 'clear' }), 409, 'conflict');
    });
  });

  describe('when someone registers with initials of a listed name', () => {
    it('then they register, and a review is recorded for staff', async () => {
      const family = surname();
      await blocklist(staff, { type: 'name', value: `Neema Wairimu ${family}` });
      const res = await api()
        .post('/api/v1/auth/register')
        .send({ email: `neema-${randomUUID().slice(0, 8)}@example.com`, password: 'a-long-enough-password', full_name: `N. W. ${family}` });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      const [hit] = await rows<{ context: string; verdict: string; status: string; review_reason: string }>(
        `SELECT context, verdict, status, review_reason FROM screening_hits WHERE screened_value = :value`,
        { value: `n w ${family.toLowerCase()}` },
      );
      expect(hit).to.deep.equal({ context: 'registration', verdict: 'review', status: 'needs_review', review_reason: 'initials' });
    });

    it('then the review names the new account, whose user cannot decide it even once they are staff', async () => {
      const family = surname();
      await blocklist(staff, { type: 'name', value: `Baraka Onyango ${family}` });
      const email = `baraka-${randomUUID().slice(0, 8)}@example.com`;
      const password = 'a-long-enough-password';
      const registered = await api()
        .post('/api/v1/auth/register')
        .send({ email, password, full_name: `B. O. ${family}` });
      expect(registered.status, JSON.stringify(registered.body)).to.equal(201);
      const userId = (registered.body as { user_id: string }).user_id;
      const [hit] = await rows<{ id: string; user_id: string | null }>(
        `SELECT id, user_id FROM screening_hits WHERE screened_value = :value AND status = 'needs_review'`,
        { value: `b o ${family.toLowerCase()}` },
      );
      expect(hit.user_id).to.equal(userId);

      await User.update({ roles: ['compliance'] }, { where: { id: userId } });
      const login = await api().post('/api/v1/auth/login').send({ email, password });
      expect(login.status, JSON.stringify(login.body)).to.equal(200);
      const self = { auth: { Authorization: `Bearer ${(login.body as { access_token: string }).access_token}` } } as TestUser;
      expectProblem(await decide(self, hit.id, { decision: 'clear' }), 403, 'forbidden');
      expect((await decide(otherStaff, hit.id, { decision: 'confirm' })).status).to.equal(200);
    });

    it('then a registration refused for a duplicate e-mail records no review', async () => {
      const family = surname();
      await blocklist(staff, { type: 'name', value: `Amani Kerubo ${family}` });
      const taken = await newUser({ funded: false });
      const res = await api()
        .post('/api/v1/auth/register')
        .send({ email: taken.email, password: 'a-long-enough-password', full_name: `A. K. ${family}` });
      expectProblem(res, 409, 'conflict');
      const hits = await rows<{ id: string }>(`SELECT id FROM screening_hits WHERE screened_value = :value`, {
        value: `a k ${family.toLowerCase()}`,
      });
      expect(hits).to.deep.equal([]);
    });
  });

  describe('when the review endpoints are misused', () => {
    it('then a user without a compliance role is 403, a bad decision 400, an unknown review 404', async () => {
      const user = await newUser();
      expectProblem(await api().get('/api/v1/compliance/reviews').set(user.auth), 403, 'forbidden');
      expectProblem(await decide(user, randomUUID(), { decision: 'clear' }), 403, 'forbidden');
      expectProblem(await decide(staff, randomUUID(), { decision: 'maybe' }), 400, 'validation_failed');
      expectProblem(await decide(staff, randomUUID(), { decision: 'clear' }), 404, 'not_found');
      expectProblem(await api().get('/api/v1/compliance/reviews').set(staff.auth).query({ status: 'pending' }), 400, 'validation_failed');
    });

    it('then staff may not decide a review of their own payment', async function () {
      this.timeout(30_000);
      const family = surname();
      await blocklist(staff, { type: 'name', value: `Tumaini Achieng ${family}` });
      const orderId = await pay(otherStaff, `Tumaini ${family}`);
      const review = await heldReview(staff, orderId);
      expectProblem(await decide(otherStaff, review.review_id, { decision: 'clear' }), 403, 'forbidden');
      expect((await decide(staff, review.review_id, { decision: 'confirm' })).status).to.equal(200);
      expect((await waitForOrder(otherStaff, orderId)).status).to.equal('rejected');
    });
  });
});

describe('searching the lists (staff)', () => {
  let staff: TestUser;

  before(async () => {
    staff = await newUser({ roles: ['user', 'compliance'] });
  });

  const search = (who: TestUser, query: Record<string, string>) => api().get('/api/v1/compliance/screen').set(who.auth).query(query);

  describe('when staff search a name written in another script', () => {
    it('then the best matches come with their list, score, verdict and the folded forms compared', async () => {
      // A family name of letters spelled one for one in Latin and Cyrillic, and its Cyrillic spelling.
      const LATIN = 'bdfklmnprtv';
      const CYRILLIC = 'бдфклмнпртв';
      const picks = Array.from({ length: 6 }, () => randomInt(LATIN.length));
      const family = picks.map((i) => LATIN[i]).join('');
      const entry = await blocklist(staff, { type: 'name', value: `Oleg Viktorovich ${family}ov` });
      const cyrillic = `${picks.map((i) => CYRILLIC[i]).join('')}ов`;
      const res = await search(staff, { name: `Олег Викторович ${cyrillic}` });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const body = res.body as {
        thresholds: { block: number; review: number };
        matches: { entry_id: string; source: string; verdict: string; score: string; compared: { screened: string; listed: string } }[];
      };
      expect(body.thresholds).to.deep.equal({ block: 0.92, review: 0.88 });
      const [best] = body.matches;
      expect(best).to.deep.include({ entry_id: entry.entry_id, source: 'manual' });
      expect(['block', 'review']).to.include(best.verdict);
      expect(best.compared.screened).to.match(/^oleg viktorovich /);
    });

    it('then an unrelated name finds nothing above the floor, and nothing is recorded', async () => {
      const res = await search(staff, { name: 'Zzyzx Qwvbn' });
      expect(res.status).to.equal(200);
      expect((res.body as { matches: unknown[] }).matches).to.deep.equal([]);
      expect(await rows(`SELECT 1 FROM screening_hits WHERE screened_value = 'zzyzx qwvbn'`)).to.have.length(0);
    });
  });

  describe('when the search is misused', () => {
    it('then a customer is 403, a missing name or unknown type 400, and more than the quota 429', async () => {
      const user = await newUser();
      expectProblem(await search(user, { name: 'John' }), 403, 'forbidden');
      expectProblem(await search(staff, { name: '' }), 400, 'validation_failed');
      expectProblem(await search(staff, { name: 'John', type: 'shoe_size' }), 400, 'validation_failed');
      const greedy = await newUser({ roles: ['user', 'compliance'] });
      let limited: { status: number; headers: Record<string, string>; body: unknown } | undefined;
      for (let i = 0; i < 70 && !limited; i++) {
        const res = await search(greedy, { name: `John ${i}` });
        if (res.status === 429) limited = res;
      }
      expect(limited, 'no 429 within 70 searches').to.not.equal(undefined);
      expectProblem(limited!, 429, 'rate_limited');
      expect(limited!.headers['retry-after']).to.match(/^\d+$/);
    });
  });
});
