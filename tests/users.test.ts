import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { api, newNamedUser, newUser, type TestUser } from './support/api';
import { expectProblem } from './support/problems';

interface UserDetailBody {
  user_id: string;
  email: string;
  full_name: string;
  phone: string | null;
  role: string;
  roles: string[];
  kyc_status: string;
  created_at: string;
  kyc: { status: string; id_type: string | null; decided_by?: string | null; history?: unknown[] };
}

interface PageBody {
  data: UserDetailBody[];
  next_cursor: string | null;
}

const UNKNOWN_ID = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';

const get = (path: string, who?: TestUser, query: Record<string, string | number> = {}) => {
  const req = api().get(`/api/v1${path}`).query(query);
  return who ? req.set(who.auth) : req;
};

describe('users', () => {
  let user: TestUser;
  let other: TestUser;
  let compliance: TestUser;
  let admin: TestUser;

  before(async () => {
    user = await newUser();
    other = await newUser();
    compliance = await newUser({ roles: ['user', 'compliance'] });
    admin = await newUser({ roles: ['user', 'admin'] });
  });

  describe('when each role lists users (access matrix)', () => {
    it('then anonymous is 401 and a user 403', async () => {
      expectProblem(await get('/users'), 401, 'unauthenticated');
      expectProblem(await get('/users', user), 403, 'forbidden');
    });

    it('then compliance and admin get a page of users, newest first, with KYC status and data', async () => {
      for (const staff of [compliance, admin]) {
        const res = await get('/users', staff, { limit: 100 });
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        const page = res.body as PageBody;
        const ids = page.data.map((u) => u.user_id);
        expect(ids).to.include.members([user.id, other.id]);
        expect(ids.indexOf(other.id)).to.be.lessThan(ids.indexOf(user.id));
        const listed = page.data.find((u) => u.user_id === user.id)!;
        expect(listed).to.include({ email: user.email, kyc_status: 'unverified', role: 'user' });
        expect(listed.kyc).to.include({ status: 'unverified', id_type: null });
        expect(listed).to.not.have.property('password_hash');
      }
    });
  });

  describe('when each role reads a user (access matrix)', () => {
    it('then anonymous is 401', async () => {
      expectProblem(await get(`/users/${user.id}`), 401, 'unauthenticated');
    });

    it('then a user reads themself, without the staff-only KYC fields', async () => {
      const res = await get(`/users/${user.id}`, user);
      expect(res.status).to.equal(200);
      const body = res.body as UserDetailBody;
      expect(body).to.include({ user_id: user.id, email: user.email, kyc_status: 'unverified' });
      expect(body.kyc.status).to.equal('unverified');
      expect(body.kyc).to.not.have.property('history');
      expect(body.kyc).to.not.have.property('decided_by');
    });

    it('then a user reading someone else gets 404, like an unknown id', async () => {
      expectProblem(await get(`/users/${other.id}`, user), 404, 'not_found');
      expectProblem(await get(`/users/${UNKNOWN_ID}`, user), 404, 'not_found');
    });

    it('then compliance and admin read anyone, with the KYC history', async () => {
      for (const staff of [compliance, admin]) {
        const res = await get(`/users/${user.id}`, staff);
        expect(res.status).to.equal(200);
        const body = res.body as UserDetailBody;
        expect(body.user_id).to.equal(user.id);
        expect(body.kyc.history).to.deep.equal([]);
        expect(body.kyc.decided_by).to.equal(null);
      }
    });

    it('then a malformed id is 400 and an unknown one 404', async () => {
      expect(expectProblem(await get('/users/not-a-uuid', compliance), 400, 'validation_failed').errors?.[0].field).to.equal('user_id');
      expectProblem(await get(`/users/${UNKNOWN_ID}`, compliance), 404, 'not_found');
    });
  });

  describe('when staff filter and page the list', () => {
    const tag = randomUUID().slice(0, 6).replace(/\d/g, 'q');
    let named: TestUser[] = [];

    before(async () => {
      named = [];
      for (const first of ['Amani', 'Baraka', 'Chiku']) named.push(await newNamedUser(`${first} Filtertest${tag}`));
    });

    it('then q matches the name or e-mail, case-insensitively', async () => {
      const res = await get('/users', compliance, { q: `FILTERTEST${tag}` });
      expect((res.body as PageBody).data.map((u) => u.user_id)).to.deep.equal(named.map((u) => u.id).reverse());
      const byEmail = await get('/users', compliance, { q: named[1].email });
      expect((byEmail.body as PageBody).data.map((u) => u.user_id)).to.deep.equal([named[1].id]);
    });

    it('then kyc_status narrows to that status', async () => {
      const verified = await newUser({ kycStatus: 'verified' });
      const res = await get('/users', compliance, { kyc_status: 'verified', limit: 100 });
      const data = (res.body as PageBody).data;
      expect(data.map((u) => u.user_id)).to.include(verified.id);
      expect(data.every((u) => u.kyc_status === 'verified')).to.equal(true);
    });

    it('then pages follow the cursor without overlap', async () => {
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let i = 0; i < 5; i++) {
        const res = await get('/users', compliance, { q: `filtertest${tag}`, limit: 1, ...(cursor ? { cursor } : {}) });
        const page = res.body as PageBody;
        seen.push(...page.data.map((u) => u.user_id));
        if (!page.next_cursor) break;
        cursor = page.next_cursor;
      }
      expect(seen).to.deep.equal(named.map((u) => u.id).reverse());
    });

    it('then a bad filter is a 400 naming it', async () => {
      expect(expectProblem(await get('/users', compliance, { kyc_status: 'famous' }), 400, 'validation_failed').errors?.[0].field).to.equal(
        'kyc_status',
      );
      expect(expectProblem(await get('/users', compliance, { limit: 101 }), 400, 'validation_failed').errors?.[0].field).to.equal('limit');
    });
  });
});
