import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { api, newUser, uniqueKenyanPhone, type TestUser } from './support/api';
import { expectProblem } from './support/problems';

interface EntryBody {
  entry_id: string;
  type: string;
  value: string;
  reason: string;
  source: string;
  created_by: string | null;
  created_at: string;
  expires_at: string | null;
  active: boolean;
}

const add = (who: TestUser | undefined, body: Record<string, unknown>) => {
  const req = api().post('/api/v1/compliance/blocklist');
  return who ? req.set(who.auth).send(body) : req.send(body);
};
const list = (who: TestUser | undefined, query: Record<string, string | number | boolean> = {}) => {
  const req = api().get('/api/v1/compliance/blocklist').query(query);
  return who ? req.set(who.auth) : req;
};

const uniqueEmail = (tag: string) => `${tag}-${randomUUID().slice(0, 8)}@Example.COM`;

describe('compliance blocklist', () => {
  let compliance: TestUser;
  let admin: TestUser;
  let user: TestUser;

  before(async () => {
    compliance = await newUser({ roles: ['user', 'compliance'] });
    admin = await newUser({ roles: ['user', 'admin'] });
    user = await newUser();
  });

  describe('when each role adds and lists entries (access matrix)', () => {
    it('then anonymous callers get 401 on both', async () => {
      expectProblem(await add(undefined, { type: 'email', value: uniqueEmail('anon'), reason: 'x' }), 401, 'unauthenticated');
      expectProblem(await list(undefined), 401, 'unauthenticated');
    });

    it('then a user gets 403 on both', async () => {
      expectProblem(await add(user, { type: 'email', value: uniqueEmail('user'), reason: 'x' }), 403, 'forbidden');
      expectProblem(await list(user), 403, 'forbidden');
    });

    it('then compliance and admin get 201 on adding and 200 on listing', async () => {
      for (const staff of [compliance, admin]) {
        const created = await add(staff, { type: 'email', value: uniqueEmail('staff'), reason: 'fraud case' });
        expect(created.status, JSON.stringify(created.body)).to.equal(201);
        expect((created.body as EntryBody).created_by).to.equal(staff.id);
        const listed = await list(staff, { limit: 5 });
        expect(listed.status).to.equal(200);
        expect((listed.body as { data: EntryBody[] }).data.map((e) => e.entry_id)).to.include((created.body as EntryBody).entry_id);
      }
    });
  });

  describe('when an entry is added', () => {
    it('then it is 201 with the normalised value, the reason, source manual and no expiry', async () => {
      const email = uniqueEmail('new');
      const res = await add(compliance, { type: 'email', value: `  ${email} `, reason: 'confirmed fraud' });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      const entry = res.body as EntryBody;
      expect(entry).to.include({
        type: 'email',
        value: email.toLowerCase(),
        reason: 'confirmed fraud',
        source: 'manual',
        created_by: compliance.id,
        expires_at: null,
        active: true,
      });
      expect(entry.entry_id).to.match(/^[0-9a-f-]{36}$/);
      expect(new Date(entry.created_at).getTime()).to.be.closeTo(Date.now(), 60_000);
    });

    const spellings: [string, string, string, string][] = [
      ['phone', '0712 345 999', '+254712345999', '+254-712-345-999'],
      ['name', 'Zawadi  ODERA wekesa', 'zawadi odera wekesa', 'Wekesa, Zawadi Odera'],
      ['national_id', '23 456 789', '23456789', '23-456-789'],
      ['country', 'kp', 'KP', ' KP '],
      ['bank_account', '0110 2233 4455', '011022334455', '011022334455'],
    ];
    for (const [type, first, normalised, second] of spellings) {
      it(`then a ${type} added again in another spelling returns the existing entry with 200`, async () => {
        const one = await add(compliance, { type, value: first, reason: 'first' });
        expect([200, 201]).to.include(one.status);
        expect((one.body as EntryBody).value).to.equal(normalised);
        const two = await add(compliance, { type, value: second, reason: 'second' });
        expect(two.status, JSON.stringify(two.body)).to.equal(200);
        expect((two.body as EntryBody).entry_id).to.equal((one.body as EntryBody).entry_id);
        expect((two.body as EntryBody).reason).to.equal((one.body as EntryBody).reason);
      });
    }

    it('then the same value under another type is a separate entry', async () => {
      const value = `${Date.now()}`.slice(-8);
      const asId = await add(compliance, { type: 'national_id', value, reason: 'id' });
      const asAccount = await add(compliance, { type: 'bank_account', value, reason: 'account' });
      expect(asId.status).to.equal(201);
      expect(asAccount.status).to.equal(201);
      expect((asAccount.body as EntryBody).entry_id).to.not.equal((asId.body as EntryBody).entry_id);
    });
  });

  describe('when the body is invalid', () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['an unknown type', { type: 'ip_address', value: '10.0.0.1', reason: 'x' }, 'type'],
      ['a phone that is no phone', { type: 'phone', value: 'call me', reason: 'x' }, 'value'],
      ['an e-mail that is no e-mail', { type: 'email', value: 'nobody', reason: 'x' }, 'value'],
      ['a country name instead of a code', { type: 'country', value: 'Kenya', reason: 'x' }, 'value'],
      ['no reason', { type: 'email', value: 'x@example.com' }, 'reason'],
      ['an empty reason', { type: 'email', value: 'x@example.com', reason: '  ' }, 'reason'],
      ['an unknown source', { type: 'email', value: 'x@example.com', reason: 'x', source: 'interpol' }, 'source'],
      ['an expiry that is no timestamp', { type: 'email', value: 'x@example.com', reason: 'x', expires_at: 'tomorrow' }, 'expires_at'],
      ['no value', { type: 'email', reason: 'x' }, 'value'],
    ];
    for (const [what, body, field] of cases) {
      it(`then ${what} is a 400 naming ${field}`, async () => {
        const problem = expectProblem(await add(compliance, body), 400, 'validation_failed');
        expect(problem.errors?.map((e) => e.field)).to.include(field);
      });
    }
  });

  describe('when entries are listed with filters', () => {
    const tag = randomUUID().slice(0, 8);
    let ids: string[] = [];

    before(async () => {
      ids = [];
      for (const value of [`a-${tag}@example.com`, `b-${tag}@example.com`, `c-${tag}@example.com`]) {
        ids.push(((await add(compliance, { type: 'email', value, reason: 'filter test' })).body as EntryBody).entry_id);
      }
      await add(compliance, { type: 'name', value: `Filter ${tag} Person`, reason: 'filter test' });
    });

    it('then q finds the entries whose value contains it, newest first', async () => {
      const res = await list(compliance, { q: tag.toUpperCase() });
      expect(res.status).to.equal(200);
      const data = (res.body as { data: EntryBody[] }).data;
      expect(data.map((e) => e.type).sort()).to.deep.equal(['email', 'email', 'email', 'name']);
      const emails = data.filter((e) => e.type === 'email').map((e) => e.entry_id);
      expect(emails).to.deep.equal([...ids].reverse());
    });

    it('then type narrows to one type', async () => {
      const res = await list(compliance, { q: tag, type: 'name' });
      const data = (res.body as { data: EntryBody[] }).data;
      expect(data).to.have.length(1);
      expect(data[0].value).to.equal(`filter ${tag} person`);
    });

    it('then pages follow the cursor without overlap and end with a null cursor', async () => {
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 5; page++) {
        const res = await list(compliance, { q: tag, type: 'email', limit: 2, ...(cursor ? { cursor } : {}) });
        expect(res.status).to.equal(200);
        const body = res.body as { data: EntryBody[]; next_cursor: string | null };
        seen.push(...body.data.map((e) => e.entry_id));
        if (!body.next_cursor) break;
        cursor = body.next_cursor;
      }
      expect(seen).to.deep.equal([...ids].reverse());
    });

    it('then a bad filter is a 400 naming it', async () => {
      expect(expectProblem(await list(compliance, { type: 'planet' }), 400, 'validation_failed').errors?.[0].field).to.equal('type');
      expect(expectProblem(await list(compliance, { limit: 0 }), 400, 'validation_failed').errors?.[0].field).to.equal('limit');
      expect(expectProblem(await list(compliance, { cursor: 'nope' }), 400, 'validation_failed').errors?.[0].field).to.equal('cursor');
    });
  });

  describe('when an entry expires', () => {
    it('then it is listed as inactive, no longer matches, and adding it again renews it', async () => {
      const email = uniqueEmail('expired').toLowerCase();
      const past = new Date(Date.now() - 60_000).toISOString();
      const created = await add(compliance, { type: 'email', value: email, reason: 'old case', expires_at: past });
      expect(created.status).to.equal(201);
      expect(created.body as EntryBody).to.include({ active: false, expires_at: past });

      const inactive = await list(compliance, { q: email, active: false });
      expect((inactive.body as { data: EntryBody[] }).data.map((e) => e.entry_id)).to.deep.equal([(created.body as EntryBody).entry_id]);
      expect(((await list(compliance, { q: email, active: true })).body as { data: EntryBody[] }).data).to.deep.equal([]);

      // An expired entry does not stop a registration.
      const registered = await api()
        .post('/api/v1/auth/register')
        .send({ email, password: 'a-long-enough-password', full_name: 'Expiry Check', phone: uniqueKenyanPhone() });
      expect(registered.status, JSON.stringify(registered.body)).to.equal(201);

      const renewed = await add(compliance, { type: 'email', value: email, reason: 'reopened case' });
      expect(renewed.status).to.equal(200);
      expect(renewed.body as EntryBody).to.include({
        entry_id: (created.body as EntryBody).entry_id,
        reason: 'reopened case',
        expires_at: null,
        active: true,
      });
    });

    it('then an entry with a future expiry is active until then', async () => {
      const future = new Date(Date.now() + 3_600_000).toISOString();
      const res = await add(compliance, { type: 'email', value: uniqueEmail('future'), reason: 'x', expires_at: future });
      expect(res.body as EntryBody).to.include({ active: true, expires_at: future });
    });
  });
});
