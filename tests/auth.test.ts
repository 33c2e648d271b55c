import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import jwt from 'jsonwebtoken';
import { config } from '../platform/config';
import { User } from '../models';
import { ensureAdmin } from '../services/auth-service';
import { api, initiate, mpesaPayment, newUser, p2pTrade, register, TEST_PASSWORD as PASSWORD } from './support/api';
import { getOrder } from '../services/payment-service';
import { rows } from './support/db';
import { expectTracedProblem as expectProblem } from './support/problems';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

interface UserBody {
  user_id: string;
  email: string;
  full_name: string;
  phone: string | null;
  role: string;
  kyc_status: string;
  created_at: string;
}

const freshEmail = (tag = 'auth') => `${tag}-${Date.now()}-${randomUUID().slice(0, 8)}@example.com`;

const login = (email: string, password: string) => api().post('/api/v1/auth/login').send({ email, password });
const me = (token?: string) => {
  const req = api().get('/api/v1/auth/me');
  return token === undefined ? req : req.set('Authorization', `Bearer ${token}`);
};

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/**
 * A token signed with the test secret; `claims` and `options` override the ones the api issues. When the
 * claims carry their own `exp`, no `expiresIn` is added (jsonwebtoken refuses both at once).
 */
function signToken(sub: string, claims: Record<string, unknown> = {}, options: jwt.SignOptions = {}): string {
  const { jwt: cfg } = config();
  return jwt.sign({ roles: ['user'], ...claims }, cfg.secret, {
    algorithm: 'HS256',
    subject: sub,
    issuer: cfg.issuer,
    audience: cfg.audience,
    ...('exp' in claims ? {} : { expiresIn: cfg.ttlSeconds }),
    ...options,
  });
}

describe('auth', () => {
  describe('when a user registers', () => {
    it('then it is 201 with the user view, e-mail lowercased and no password material', async () => {
      const email = freshEmail('Mixed.Case');
      const res = await register({
        email: `  ${email.toUpperCase()} `,
        password: PASSWORD,
        full_name: 'Wanjiku Kamau',
        phone: '0712 345 678',
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.headers['content-type']).to.match(/^application\/json/);
      const user = res.body as UserBody;
      expect(user.user_id).to.match(UUID);
      expect(user.email).to.equal(email.toLowerCase());
      expect(user.full_name).to.equal('Wanjiku Kamau');
      expect(user.phone).to.equal('+254712345678');
      expect(user.role).to.equal('user');
      expect(user.kyc_status).to.equal('unverified');
      expect(new Date(user.created_at).toISOString()).to.equal(user.created_at);
      expect(Date.now() - Date.parse(user.created_at)).to.be.within(-5000, 60_000);
      expect(res.text).not.to.match(/password|hash|argon/i);
      expect(res.body).not.to.have.any.keys('password', 'password_hash', 'passwordHash');
    });

    it('then without a phone the phone is null', async () => {
      const res = await register({ email: freshEmail(), password: PASSWORD, full_name: 'No Phone' });
      expect(res.status).to.equal(201);
      expect((res.body as UserBody).phone).to.equal(null);
    });

    it('then a role field is ignored and the account is a plain user', async () => {
      const email = freshEmail();
      const res = await register({
        email,
        password: PASSWORD,
        full_name: 'Would Be Admin',
        role: 'admin',
        roles: ['admin'],
        kyc_status: 'verified',
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      const user = res.body as UserBody;
      expect(user.role).to.equal('user');
      expect(user.kyc_status).to.equal('unverified');
      const stored = await User.findByPk(user.user_id);
      expect(stored?.roles).to.deep.equal(['user']);
      const token = (await login(email, PASSWORD)).body as { access_token: string };
      const payload = jwt.decode(token.access_token) as { roles: string[] };
      expect(payload.roles).to.deep.equal(['user']);
    });
  });

  describe('when the e-mail is already taken', () => {
    it('then registering it again, in any case, is 409 conflict', async () => {
      const email = freshEmail();
      expect((await register({ email, password: PASSWORD, full_name: 'First' })).status).to.equal(201);
      for (const again of [email, email.toUpperCase(), ` ${email} `]) {
        const res = await register({ email: again, password: 'another-password-1', full_name: 'Second' });
        const problem = expectProblem(res, 409, 'conflict');
        expect(problem.detail).to.equal('an account with this e-mail already exists');
      }
      expect(await User.count({ where: { email } })).to.equal(1);
    });
  });

  describe('when the same e-mail is registered concurrently', () => {
    it('then exactly one account is created and the others are 409', async () => {
      const email = freshEmail('race');
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) => register({ email, password: PASSWORD, full_name: `Racer ${i}` })),
      );
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).to.deep.equal([201, 409, 409, 409, 409, 409]);
      for (const res of results.filter((r) => r.status === 409)) expectProblem(res, 409, 'conflict');
      expect(await User.count({ where: { email } })).to.equal(1);
    });
  });

  describe('when the registration is invalid', () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['a bad e-mail', { email: 'not-an-email' }, 'email'],
      ['an e-mail without a domain dot', { email: 'someone@localhost' }, 'email'],
      ['a short password', { password: 'short' }, 'password'],
      ['a 9-character password', { password: '123456789' }, 'password'],
      ['a non-Kenyan phone', { phone: '+14155550123' }, 'phone'],
      ['a garbage phone', { phone: '12345' }, 'phone'],
      ['a one-letter name', { full_name: 'X' }, 'full_name'],
      ['a numeric password', { password: 12345678901 }, 'password'],
    ];
    for (const [what, overrides, field] of cases) {
      it(`then ${what} is a 400 validation_failed naming ${field}`, async () => {
        const email = freshEmail();
        const res = await register({ email, password: PASSWORD, full_name: 'Valid Name', ...overrides });
        const problem = expectProblem(res, 400, 'validation_failed');
        expect(problem.errors?.map((e) => e.field)).to.include(field);
        expect(problem.errors?.every((e) => typeof e.message === 'string' && e.message.length > 0)).to.equal(true);
        expect(await User.count({ where: { email } })).to.equal(0);
      });
    }

    for (const missing of ['email', 'password', 'full_name']) {
      it(`then a missing ${missing} is a 400 validation_failed naming it`, async () => {
        const body: Record<string, unknown> = { email: freshEmail(), password: PASSWORD, full_name: 'Valid Name' };
        delete body[missing];
        const res = await register(body);
        const problem = expectProblem(res, 400, 'validation_failed');
        expect(problem.errors?.map((e) => e.field)).to.include(missing);
      });
    }

    it('then an empty body is a 400 validation_failed', async () => {
      const res = await api().post('/api/v1/auth/register').set('Content-Type', 'application/json').send('{}');
      const problem = expectProblem(res, 400, 'validation_failed');
      expect(problem.errors?.map((e) => e.field)).to.include.members(['email', 'password', 'full_name']);
    });
  });

  describe('when a user logs in', () => {
    it('then it gets a Bearer HS256 JWT with iss, aud, sub and the advertised lifetime', async () => {
      const user = await newUser();
      const res = await login(user.email, user.password);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const body = res.body as { access_token: string; token_type: string; expires_in: number };
      expect(body).to.have.all.keys('access_token', 'token_type', 'expires_in');
      expect(body.token_type).to.equal('Bearer');
      expect(body.expires_in).to.equal(config().jwt.ttlSeconds);
      const decoded = jwt.decode(body.access_token, { complete: true });
      expect(decoded).to.not.equal(null);
      expect(decoded!.header.alg).to.equal('HS256');
      const payload = decoded!.payload as jwt.JwtPayload;
      expect(payload.iss).to.equal('paygate');
      expect(payload.aud).to.equal('paygate-api');
      expect(payload.sub).to.equal(user.id);
      expect(payload.exp! - payload.iat!).to.equal(body.expires_in);
      expect(payload.iat! * 1000).to.be.closeTo(Date.now(), 10_000);
      // It verifies with the configured secret, pinned to HS256.
      expect(() => jwt.verify(body.access_token, config().jwt.secret, { algorithms: ['HS256'] })).not.to.throw();
    });

    it('then the e-mail is matched case-insensitively', async () => {
      const user = await newUser();
      const res = await login(`  ${user.email.toUpperCase()}`, user.password);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect((jwt.decode((res.body as { access_token: string }).access_token) as jwt.JwtPayload).sub).to.equal(user.id);
    });
  });

  describe('when the credentials are wrong', () => {
    it('then a wrong password and an unknown e-mail are the same 401', async () => {
      const user = await newUser();
      const wrongPassword = expectProblem(await login(user.email, 'not-the-password'), 401, 'unauthenticated');
      const unknownEmail = expectProblem(await login(freshEmail('ghost'), user.password), 401, 'unauthenticated');
      expect(wrongPassword.detail).to.equal('wrong e-mail or password');
      expect(unknownEmail.detail).to.equal(wrongPassword.detail);
      expect(wrongPassword).not.to.have.property('errors');
      expect(unknownEmail).not.to.have.property('errors');
    });

    it('then a login with missing fields is 400, not 401', async () => {
      const res = await api().post('/api/v1/auth/login').send({ email: freshEmail() });
      const problem = expectProblem(res, 400, 'validation_failed');
      expect(problem.errors?.map((e) => e.field)).to.include('password');
    });
  });

  describe('when /auth/me is called', () => {
    it('then with a valid token it is the caller', async () => {
      const user = await newUser({ phone: '+254711000111' });
      const res = await me(user.token);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const body = res.body as UserBody;
      expect(body.user_id).to.equal(user.id);
      expect(body.email).to.equal(user.email);
      expect(body.full_name).to.equal('Test User');
      expect(body.phone).to.equal('+254711000111');
      expect(body.role).to.equal('user');
      expect(body.kyc_status).to.equal('unverified');
      expect(res.text).not.to.match(/password|hash/i);
    });

    it('then without a token it is 401', async () => {
      const problem = expectProblem(await me(), 401, 'unauthenticated');
      expect(problem.detail).to.be.a('string').and.not.empty;
    });

    it('then a non-Bearer Authorization header is 401', async () => {
      const user = await newUser();
      const res = await api().get('/api/v1/auth/me').set('Authorization', `Basic ${user.token}`);
      expectProblem(res, 401, 'unauthenticated');
    });

    it('then a token whose payload was altered (signature kept) is 401', async () => {
      const user = await newUser();
      const [header, payload, signature] = user.token.split('.');
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
      const forged = `${header}.${b64({ ...claims, roles: ['user', 'compliance', 'admin'] })}.${signature}`;
      expectProblem(await me(forged), 401, 'unauthenticated');
    });

    it('then a token signed with another secret is 401', async () => {
      const user = await newUser();
      const { jwt: cfg } = config();
      const token = jwt.sign({ roles: ['user'] }, `${cfg.secret}-but-not-quite`, {
        algorithm: 'HS256',
        subject: user.id,
        issuer: cfg.issuer,
        audience: cfg.audience,
        expiresIn: 60,
      });
      expectProblem(await me(token), 401, 'unauthenticated');
    });

    it('then an alg "none" token is 401', async () => {
      const user = await newUser();
      const now = Math.floor(Date.now() / 1000);
      const claims = { sub: user.id, roles: ['user'], iss: 'paygate', aud: 'paygate-api', iat: now, exp: now + 300 };
      for (const alg of ['none', 'None', 'NONE']) {
        const token = `${b64({ alg, typ: 'JWT' })}.${b64(claims)}.`;
        expectProblem(await me(token), 401, 'unauthenticated');
      }
    });

    it('then a token signed with another HMAC algorithm (HS512) is 401', async () => {
      const user = await newUser();
      expectProblem(await me(signToken(user.id, {}, { algorithm: 'HS512' })), 401, 'unauthenticated');
    });

    it('then an expired token is 401', async () => {
      const user = await newUser();
      const now = Math.floor(Date.now() / 1000);
      const expired = signToken(user.id, { iat: now - 120, exp: now - 60 });
      expectProblem(await me(expired), 401, 'unauthenticated');
    });

    it('then a token with a lifetime longer than allowed (old iat) is 401', async () => {
      const user = await newUser();
      const now = Math.floor(Date.now() / 1000);
      const ancient = signToken(user.id, { iat: now - 24 * 3600, exp: now + 3600 });
      expectProblem(await me(ancient), 401, 'unauthenticated');
    });

    it('then a token with the wrong issuer is 401', async () => {
      const user = await newUser();
      expectProblem(await me(signToken(user.id, {}, { issuer: 'evil-issuer' })), 401, 'unauthenticated');
    });

    it('then a token with the wrong audience is 401', async () => {
      const user = await newUser();
      expectProblem(await me(signToken(user.id, {}, { audience: 'some-other-api' })), 401, 'unauthenticated');
    });

    it('then a correctly signed token for a valid user is accepted (control for the cases above)', async () => {
      const user = await newUser();
      const res = await me(signToken(user.id));
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect((res.body as UserBody).user_id).to.equal(user.id);
    });

    it('then a correctly signed token for an account that does not exist is 401', async () => {
      expectProblem(await me(signToken('0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b')), 401, 'unauthenticated');
    });

    it('then a correctly signed token with an unknown role or a non-UUID subject is 401', async () => {
      const user = await newUser();
      expectProblem(await me(signToken(user.id, { roles: ['root'] })), 401, 'unauthenticated');
      expectProblem(await me(signToken('not-a-uuid')), 401, 'unauthenticated');
    });
  });

  describe('when a staff member is demoted while their token is still valid (and its verification is cached)', () => {
    it('then the very next request with that token is 403 on a staff endpoint, and /me shows the new role', async () => {
      const officer = await newUser({ roles: ['user', 'compliance'] });
      // Twice: the second request is answered from the cache of verified tokens.
      for (let i = 0; i < 2; i++) {
        const before = await api().get('/api/v1/users').set(officer.auth);
        expect(before.status, JSON.stringify(before.body)).to.equal(200);
      }

      await User.update({ roles: ['user'] }, { where: { id: officer.id } });
      expectProblem(await api().get('/api/v1/users').set(officer.auth), 403, 'forbidden');
      const self = await me(officer.token);
      expect(self.status).to.equal(200);
      expect((self.body as UserBody).role).to.equal('user');
    });
  });

  describe('when an account is removed while its token is still valid (and its verification is cached)', () => {
    it('then the token is 401 on the next request', async () => {
      // Without money in: an account with deposits is kept for its ledger history.
      const user = await newUser({ funded: false });
      expect((await me(user.token)).status).to.equal(200);
      expect((await me(user.token)).status).to.equal(200);
      await User.destroy({ where: { id: user.id } });
      expectProblem(await me(user.token), 401, 'unauthenticated');
    });
  });

  describe('when an order is read (the caller’s standing and the order in one statement)', () => {
    const readOrder = (token: string, id: string) => api().get(`/api/v1/payments/orders/${id}`).set('Authorization', `Bearer ${token}`);

    it('then the owner’s answer is the order as the service reads it on its own, amounts exact', async () => {
      const owner = await newUser();
      const accepted = await initiate(owner, mpesaPayment({ amount: '1234.56' }));
      const id = (accepted.body as { order_id: string }).order_id;
      const res = await readOrder(owner.token, id);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const alone = await getOrder({ id: owner.id, roles: ['user'], kycStatus: 'unverified' }, id);
      expect(res.body).to.deep.equal(JSON.parse(JSON.stringify(alone)));
      expect((res.body as { amount: string }).amount).to.equal('1234.56');
    });

    it('then another customer’s read of it is 404, and a staff member demoted with the token cached is 404 on the next read', async () => {
      const owner = await newUser();
      const id = ((await initiate(owner, mpesaPayment())).body as { order_id: string }).order_id;
      const stranger = await newUser();
      expectProblem(await readOrder(stranger.token, id), 404, 'not_found');
      const officer = await newUser({ roles: ['user', 'compliance'] });
      for (let i = 0; i < 2; i++) expect((await readOrder(officer.token, id)).status).to.equal(200);
      await User.update({ roles: ['user'] }, { where: { id: officer.id } });
      expectProblem(await readOrder(officer.token, id), 404, 'not_found');
    });

    it('then an account removed with its token cached is 401, and an order id that is not a UUID is 400', async () => {
      const user = await newUser({ funded: false });
      const missing = randomUUID();
      expectProblem(await readOrder(user.token, missing), 404, 'not_found');
      expectProblem(await readOrder(user.token, 'not-a-uuid'), 400, 'validation_failed');
      await User.destroy({ where: { id: user.id } });
      expectProblem(await readOrder(user.token, missing), 401, 'unauthenticated');
    });
  });

  describe('when a payment is initiated (the caller’s standing read by the statement recording the order)', () => {
    const keysOf = (userId: string) =>
      rows<{ key: string }>(`SELECT key FROM idempotency_keys WHERE scope = :scope`, { scope: `user:${userId}` });
    const ordersOf = (userId: string) => rows<{ id: string }>('SELECT id FROM orders WHERE user_id = :userId', { userId });

    it('then an account removed with its token cached is 401, with no order recorded and no key kept', async () => {
      // Without money in: an account with deposits is kept for its ledger history.
      const user = await newUser({ funded: false });
      // Twice, the second from the cache of verified tokens; both judged and refused by the statement (no money).
      for (let i = 0; i < 2; i++) expectProblem(await initiate(user, mpesaPayment()), 422, 'insufficient_funds');
      await User.destroy({ where: { id: user.id } });
      const key = randomUUID();
      expectProblem(await initiate(user, mpesaPayment(), key), 401, 'unauthenticated');
      expect(await ordersOf(user.id)).to.deep.equal([]);
      expect((await keysOf(user.id)).map((k) => k.key)).to.not.include(key);
      // Nor does a trade read the ad of another first: the account is refused before the quote.
      expectProblem(await initiate(user, p2pTrade(randomUUID(), '500.00')), 401, 'unauthenticated');
    });

    it('then a correctly signed token for an account that never existed is 401, and nothing is recorded', async () => {
      const ghost = randomUUID();
      const token = signToken(ghost);
      const res = await api()
        .post('/api/v1/payments/initiate')
        .set('Authorization', `Bearer ${token}`)
        .set('Idempotency-Key', randomUUID())
        .send(mpesaPayment());
      expectProblem(res, 401, 'unauthenticated');
      expect(await ordersOf(ghost)).to.deep.equal([]);
      expect(await keysOf(ghost)).to.deep.equal([]);
    });

    it('then a KYC status changed with the token cached decides the very next payment’s tier', async () => {
      const user = await newUser({ kycStatus: 'verified' });
      const { perPaymentKes } = config().limits.unverified;
      const overUnverified = (Number(perPaymentKes) + 1).toFixed(2);
      const first = await initiate(user, mpesaPayment({ amount: overUnverified }));
      expect(first.status, JSON.stringify(first.body)).to.equal(202);
      await User.update({ kycStatus: 'unverified' }, { where: { id: user.id } });
      const before = await ordersOf(user.id);
      const refused = expectProblem(await initiate(user, mpesaPayment({ amount: overUnverified })), 422, 'kyc_required');
      expect(refused.detail).to.include('per payment');
      expect(await ordersOf(user.id)).to.have.length(before.length);
      // Within the unverified tier it is still accepted.
      expect((await initiate(user, mpesaPayment({ amount: '100.00' }))).status).to.equal(202);
    });
  });

  describe('when a token has been verified and cached', () => {
    it('then it is refused once it expires, as an uncached one is', async () => {
      const user = await newUser({ funded: false });
      const now = Math.floor(Date.now() / 1000);
      const token = signToken(user.id, { iat: now, exp: now + 2 });
      expect((await me(token)).status).to.equal(200);
      expect((await me(token)).status).to.equal(200);
      await new Promise((resolve) => setTimeout(resolve, (now + 2) * 1000 - Date.now() + 50));
      expectProblem(await me(token), 401, 'unauthenticated');
    });

    it('then the same header and claims under another signature are still refused', async () => {
      const user = await newUser({ funded: false });
      const token = signToken(user.id);
      expect((await me(token)).status).to.equal(200);
      const [header, payload, signature] = token.split('.') as [string, string, string];
      const flipped = Buffer.from(signature, 'base64url');
      flipped[0] = flipped[0] ^ 0xff;
      expectProblem(await me(`${header}.${payload}.${flipped.toString('base64url')}`), 401, 'unauthenticated');
      expect((await me(token)).status).to.equal(200);
    });
  });

  describe('when an account has too many failed logins from one address', () => {
    it('then further attempts are 429 with Retry-After, even with the right password', async () => {
      const limit = config().rateLimits.loginPerAccountAndIp;
      expect(limit).to.equal(5);
      const user = await newUser();
      for (let i = 0; i < limit; i += 1) {
        expectProblem(await login(user.email, `wrong-password-${i}`), 401, 'unauthenticated');
      }
      const blocked = await login(user.email, user.password);
      const problem = expectProblem(blocked, 429, 'rate_limited');
      const retryAfter = Number(blocked.headers['retry-after']);
      expect(Number.isInteger(retryAfter)).to.equal(true);
      expect(retryAfter).to.be.within(1, 15 * 60);
      expect(problem.detail).to.include('failed logins');
      // The block is by account, whatever the case of the e-mail.
      expectProblem(await login(user.email.toUpperCase(), user.password), 429, 'rate_limited');
    });

    it('then fewer failures than the limit still let the right password in', async () => {
      const limit = config().rateLimits.loginPerAccountAndIp;
      const user = await newUser();
      for (let i = 0; i < limit - 1; i += 1) expectProblem(await login(user.email, 'wrong-password'), 401, 'unauthenticated');
      expect((await login(user.email, user.password)).status).to.equal(200);
    });

    it('then another account is unaffected', async () => {
      const limit = config().rateLimits.loginPerAccountAndIp;
      const victim = await newUser();
      const bystander = await newUser();
      for (let i = 0; i <= limit; i += 1) await login(victim.email, 'wrong-password');
      expectProblem(await login(victim.email, victim.password), 429, 'rate_limited');
      const res = await login(bystander.email, bystander.password);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect((res.body as { token_type: string }).token_type).to.equal('Bearer');
    });
  });

  describe('when an admin is bootstrapped', () => {
    it('then ensureAdmin creates a user holding admin and compliance', async () => {
      const email = freshEmail('admin');
      const { user, outcome } = await ensureAdmin(email, 'admin-password-123');
      expect(outcome).to.equal('created');
      expect(user.email).to.equal(email);
      expect(user.role).to.equal('admin');
      expect(user.roles).to.have.members(['user', 'compliance', 'admin']);
      const res = await login(email, 'admin-password-123');
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const token = (res.body as { access_token: string }).access_token;
      expect((jwt.decode(token) as { roles: string[] }).roles).to.have.members(['user', 'compliance', 'admin']);
      const profile = await me(token);
      expect(profile.status).to.equal(200);
      expect((profile.body as UserBody).role).to.equal('admin');
      expect((profile.body as UserBody).user_id).to.equal(user.user_id);
    });

    it('then calling it again for that admin leaves the account alone, password included', async () => {
      const email = freshEmail('admin');
      const first = await ensureAdmin(email, 'admin-password-123');
      const again = await ensureAdmin(`  ${email.toUpperCase()} `, 'another-password-456');
      expect(again.outcome).to.equal('present');
      expect(again.user.user_id).to.equal(first.user.user_id);
      expect(await User.count({ where: { email } })).to.equal(1);
      expect((await User.findByPk(first.user.user_id))?.roles).to.have.members(['user', 'compliance', 'admin']);
      expect((await login(email, 'admin-password-123')).status).to.equal(200);
      expectProblem(await login(email, 'another-password-456'), 401, 'unauthenticated');
    });
  });

  describe('when someone registered the admin e-mail before the admin was bootstrapped', () => {
    it('then ensureAdmin refuses, in any letter case or padding, and the account stays a plain user', async () => {
      const squatter = await newUser();
      for (const variant of [squatter.email, squatter.email.toUpperCase(), `  ${squatter.email} `]) {
        try {
          await ensureAdmin(variant, 'operator-password-123');
          expect.fail(`ensureAdmin accepted the existing non-admin account as ${JSON.stringify(variant)}`);
        } catch (err) {
          expect((err as { code?: string }).code, String(err)).to.equal('conflict');
        }
      }
      expect((await User.findByPk(squatter.id))?.roles).to.deep.equal(['user']);
      expect(await User.count({ where: { email: squatter.email } })).to.equal(1);
      expectProblem(await login(squatter.email, 'operator-password-123'), 401, 'unauthenticated');
      const profile = await me(squatter.token);
      expect((profile.body as UserBody).role).to.equal('user');
    });

    it('then an explicit promote makes that account an admin with its own password kept', async () => {
      const owner = await newUser();
      const { user, outcome } = await ensureAdmin(owner.email.toUpperCase(), undefined, { promote: true });
      expect(outcome).to.equal('promoted');
      expect(user.user_id).to.equal(owner.id);
      expect(user.role).to.equal('admin');
      expect(await User.count({ where: { email: owner.email } })).to.equal(1);
      expect((await User.findByPk(owner.id))?.roles).to.have.members(['user', 'compliance', 'admin']);
      const res = await login(owner.email, owner.password);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const token = (res.body as { access_token: string }).access_token;
      expect((jwt.decode(token) as { roles: string[] }).roles).to.have.members(['user', 'compliance', 'admin']);

      const again = await ensureAdmin(owner.email, undefined, { promote: true });
      expect(again.outcome).to.equal('present');
      expect((await User.findByPk(owner.id))?.roles).to.have.lengthOf(3);
    });
  });

  describe('when an admin is bootstrapped with bad input', () => {
    it('then a bad e-mail or short password is refused', async () => {
      for (const [email, password, field] of [
        ['nope', 'admin-password-123', 'email'],
        [freshEmail('admin'), 'short', 'password'],
      ]) {
        try {
          await ensureAdmin(email, password);
          expect.fail('ensureAdmin accepted invalid input');
        } catch (err) {
          expect((err as { code?: string }).code).to.equal('validation_failed');
          expect((err as { options: { errors: { field: string }[] } }).options.errors[0].field).to.equal(field);
        }
      }
    });

    it('then promoting an e-mail no account has, without a password to create it with, is refused', async () => {
      const email = freshEmail('admin');
      try {
        await ensureAdmin(email, undefined, { promote: true });
        expect.fail('ensureAdmin created an account without a password');
      } catch (err) {
        expect((err as { code?: string }).code).to.equal('validation_failed');
      }
      expect(await User.count({ where: { email } })).to.equal(0);
    });
  });

  describe('when register is retried with an Idempotency-Key', () => {
    it('then the same key and body replay the first response', async () => {
      const key = randomUUID();
      const body = { email: freshEmail(), password: PASSWORD, full_name: 'Replay Me' };
      const first = await api().post('/api/v1/auth/register').set('Idempotency-Key', key).send(body);
      expect(first.status, JSON.stringify(first.body)).to.equal(201);
      expect(first.headers).not.to.have.property('idempotent-replayed');
      const second = await api().post('/api/v1/auth/register').set('Idempotency-Key', key).send(body);
      expect(second.status).to.equal(201);
      expect(second.headers['idempotent-replayed']).to.equal('true');
      expect(second.text).to.equal(first.text);
      expect(second.headers['content-type']).to.equal(first.headers['content-type']);
      expect(await User.count({ where: { email: body.email } })).to.equal(1);
    });

    it('then the same key with a different body is 422 idempotency_key_reused', async () => {
      const key = randomUUID();
      const body = { email: freshEmail(), password: PASSWORD, full_name: 'First Body' };
      expect((await api().post('/api/v1/auth/register').set('Idempotency-Key', key).send(body)).status).to.equal(201);
      const otherEmail = freshEmail();
      const res = await api()
        .post('/api/v1/auth/register')
        .set('Idempotency-Key', key)
        .send({ ...body, email: otherEmail });
      expectProblem(res, 422, 'idempotency_key_reused');
      expect(await User.count({ where: { email: otherEmail } })).to.equal(0);
    });

    it('then a validation failure is replayed too, while a new key is judged afresh', async () => {
      const key = randomUUID();
      const body = { email: 'broken', password: PASSWORD, full_name: 'Bad Mail' };
      const first = await api().post('/api/v1/auth/register').set('Idempotency-Key', key).send(body);
      expectProblem(first, 400, 'validation_failed');
      const second = await api().post('/api/v1/auth/register').set('Idempotency-Key', key).send(body);
      expect(second.status).to.equal(400);
      expect(second.headers['idempotent-replayed']).to.equal('true');
      expect(second.text).to.equal(first.text);
    });

    it('then a malformed key is a 400 naming Idempotency-Key', async () => {
      const res = await api()
        .post('/api/v1/auth/register')
        .set('Idempotency-Key', 'has spaces')
        .send({ email: freshEmail(), password: PASSWORD, full_name: 'Key Test' });
      const problem = expectProblem(res, 400, 'validation_failed');
      expect(problem.errors?.map((e) => e.field)).to.deep.equal(['Idempotency-Key']);
    });
  });
  describe('when login is sent with an Idempotency-Key', () => {
    it('then the token is never stored in the idempotency records, and a retry logs in afresh', async () => {
      const user = await newUser();
      const key = randomUUID();
      const login = () => api().post('/api/v1/auth/login').set('Idempotency-Key', key).send({ email: user.email, password: user.password });
      const first = await login();
      expect(first.status, JSON.stringify(first.body)).to.equal(200);
      const token = (first.body as { access_token: string }).access_token;
      expect(token).to.be.a('string').and.not.empty;

      const stored = await rows<{ path: string; response_body: string | null }>(
        `SELECT path, response_body FROM idempotency_keys WHERE key = :key OR response_body LIKE :token`,
        { key, token: `%${token}%` },
      );
      expect(stored).to.deep.equal([]);

      const second = await login();
      expect(second.status).to.equal(200);
      expect(second.headers).not.to.have.property('idempotent-replayed');
    });
  });
});
