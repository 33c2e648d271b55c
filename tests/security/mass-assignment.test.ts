import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { User } from '../../models';
import {
  api,
  blocklist,
  completedPayment,
  initiate,
  mpesaPayment,
  newUser,
  postAd,
  postAppeal,
  sellAd,
  uniqueKenyanPhone,
  waitForOrder,
} from '../support/api';
import { rows } from '../support/db';
import { expectSafeProblem as expectProblem } from '../support/problems';
import { call, UNKNOWN_ID } from './support';

/**
 * OWASP API3 (broken object property level authorisation): fields a client may not set — roles, statuses,
 * owners, ids, ledger amounts, deciders — sent in bodies are dropped (tsoa removes undeclared properties)
 * and never take effect.
 */

const ANCIENT = '2000-01-01T00:00:00.000Z';

describe('security: mass assignment', () => {
  describe('when someone registers with a role, a KYC status and an id of their choosing', () => {
    it('then the account is a plain unverified user with an id of the server', async () => {
      const email = `mass-${randomUUID()}@example.com`;
      const password = 'a-long-enough-password';
      const res = await api()
        .post('/api/v1/auth/register')
        .send({
          email,
          password,
          full_name: 'Mass Assigner',
          phone: uniqueKenyanPhone(),
          role: 'admin',
          roles: ['user', 'compliance', 'admin'],
          kyc_status: 'verified',
          user_id: UNKNOWN_ID,
          id: UNKNOWN_ID,
          created_at: ANCIENT,
          password_hash: 'not-a-hash',
        });
      expect(res.status, res.text).to.equal(201);
      const body = res.body as Record<string, unknown>;
      expect(body.role).to.equal('user');
      expect(body.roles).to.deep.equal(['user']);
      expect(body.kyc_status).to.equal('unverified');
      expect(body.user_id).not.to.equal(UNKNOWN_ID);
      expect(body.created_at).not.to.equal(ANCIENT);
      expect(body).not.to.have.property('password_hash');
      const stored = await User.findByPk(body.user_id as string);
      expect(stored!.roles).to.deep.equal(['user']);
      expect(stored!.kycStatus).to.equal('unverified');

      const login = await api().post('/api/v1/auth/login').send({ email, password });
      expect(login.status).to.equal(200);
      const token = (login.body as { access_token: string }).access_token;
      const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as { roles: string[] };
      expect(claims.roles).to.deep.equal(['user']);
      expectProblem(await call('get', '/users', { token }), 403, 'forbidden');
    });
  });

  describe('when a user submits their KYC with a status of their choosing', () => {
    it('then `status` is a 403 and `kyc_status`, decider and dates are ignored: the submission is pending', async () => {
      const user = await newUser();
      const submission = {
        id_type: 'national_id',
        id_number: String(10_000_000 + Math.floor(Math.random() * 89_999_999)),
        date_of_birth: '1990-04-12',
      };
      expectProblem(
        await call('put', `/users/${user.id}/kyc`, { token: user.token, body: { ...submission, status: 'verified' } }),
        403,
        'forbidden',
      );
      const res = await call('put', `/users/${user.id}/kyc`, {
        token: user.token,
        body: { ...submission, kyc_status: 'verified', decided_by: user.id, decided_at: ANCIENT, verified: true, role: 'admin' },
      });
      expect(res.status, res.text).to.equal(200);
      const body = res.body as { kyc_status: string; role: string; kyc: { status: string; decided_at: string | null } };
      expect(body.kyc_status).to.equal('pending');
      expect(body.kyc.status).to.equal('pending');
      expect(body.kyc.decided_at).to.equal(null);
      expect(body.role).to.equal('user');
      expect((await User.findByPk(user.id))!.kycStatus).to.equal('pending');
    });

    it('then a decision by staff records the staff member as decider, whatever the body claims', async () => {
      const user = await newUser();
      const staff = await newUser({ roles: ['user', 'compliance'] });
      const submitted = await call('put', `/users/${user.id}/kyc`, {
        token: user.token,
        body: { id_type: 'passport', id_number: `P${Date.now()}`.slice(0, 12), date_of_birth: '1985-01-31' },
      });
      expect(submitted.status, submitted.text).to.equal(200);
      const decided = await call('put', `/users/${user.id}/kyc`, {
        token: staff.token,
        body: {
          status: 'verified',
          reason: 'documents match',
          submission_id: (submitted.body as { kyc: { submission_id: string } }).kyc.submission_id,
          decided_by: user.id,
          actor_id: user.id,
        },
      });
      expect(decided.status, decided.text).to.equal(200);
      const audit = await rows<{ actor_id: string }>(`SELECT actor_id FROM kyc_audit WHERE user_id = :id AND to_status = 'verified'`, {
        id: user.id,
      });
      expect(audit.map((a) => a.actor_id)).to.deep.equal([staff.id]);
    });
  });

  describe('when a payment is initiated with its status, owner, ids and ledger fields filled in', () => {
    it('then the order is the caller’s, starts pending under server ids, and moves exactly the amount asked', async () => {
      const user = await newUser();
      const other = await newUser();
      const res = await initiate(
        user,
        mpesaPayment({
          destination: { provider: 'mpesa', phone: '+254712345678', user_id: other.id, account: `user:${other.id}` },
          status: 'completed',
          user_id: other.id,
          order_id: UNKNOWN_ID,
          workflow_id: `payment-${UNKNOWN_ID}`,
          rail_reference: 'forged-receipt',
          failure_code: null,
          amount_minor: '1',
          kes_equivalent_minor: '0',
          ledger: [{ account: `user:${other.id}`, direction: 'credit', amount_minor: '99999999' }],
          events: [{ status: 'completed', at: ANCIENT }],
          created_at: ANCIENT,
        }),
      );
      expect(res.status, res.text).to.equal(202);
      const accepted = res.body as { order_id: string; status: string };
      expect(accepted.order_id).not.to.equal(UNKNOWN_ID);
      expect(accepted.status).to.equal('pending');
      const order = await waitForOrder(user, accepted.order_id);
      expect(order.status).to.equal('completed');
      expect(order.amount).to.equal('1500.00');
      expect(order.workflow_id).to.equal(`payment-${accepted.order_id}`);
      expect(order.rail_reference).not.to.equal('forged-receipt');
      const full = (await call('get', `/payments/orders/${accepted.order_id}`, { token: user.token })).body as {
        user_id: string;
        destination: Record<string, string>;
        created_at: string;
      };
      expect(full.user_id).to.equal(user.id);
      expect(full.destination).to.deep.equal({ provider: 'mpesa', phone: '+254712345678' });
      expect(full.created_at).not.to.equal(ANCIENT);
      const stored = await rows<{ user_id: string; amount_minor: string; kes_equivalent_minor: string }>(
        'SELECT user_id, amount_minor::text, kes_equivalent_minor::text FROM orders WHERE id = :id',
        { id: accepted.order_id },
      );
      expect(stored).to.deep.equal([{ user_id: user.id, amount_minor: '150000', kes_equivalent_minor: '150000' }]);
      const touched = await rows<{ account: string }>(
        `SELECT DISTINCT e.account FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id WHERE t.order_id = :id`,
        { id: accepted.order_id },
      );
      expect(touched.map((t) => t.account)).not.to.include(`wallet:${other.id}:KES`);
      const amounts = await rows<{ amount_minor: string }>(
        `SELECT DISTINCT e.amount_minor::text FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id WHERE t.order_id = :id`,
        { id: accepted.order_id },
      );
      expect(amounts).to.deep.equal([{ amount_minor: '150000' }]);
      expect(await rows('SELECT 1 FROM orders WHERE id = :id', { id: UNKNOWN_ID })).to.have.length(0);
    });
  });

  describe('when an ad is posted with an owner, available amount, status and id of the poster’s choosing', () => {
    it('then the ad is the poster’s, active, with all of its total available, under a server id', async () => {
      const maker = await newUser({ kycStatus: 'verified' });
      const other = await newUser({ kycStatus: 'verified' });
      const res = await postAd(
        maker,
        sellAd({
          owner: other.id,
          owner_id: other.id,
          available_amount: '999999.000000',
          status: 'closed',
          ad_id: UNKNOWN_ID,
          created_at: ANCIENT,
        }),
      );
      expect(res.status, res.text).to.equal(201);
      const ad = res.body as {
        ad_id: string;
        owner: string;
        available_amount: string;
        total_amount: string;
        status: string;
        created_at: string;
      };
      expect(ad.owner).to.equal(maker.id);
      expect(ad.available_amount).to.equal(ad.total_amount);
      expect(ad.status).to.equal('active');
      expect(ad.ad_id).not.to.equal(UNKNOWN_ID);
      expect(ad.created_at).not.to.equal(ANCIENT);
      const stored = await rows<{ owner_id: string; available: string; total: string }>(
        'SELECT owner_id, available_amount_minor::text AS available, total_amount_minor::text AS total FROM p2p_ads WHERE id = :id',
        { id: ad.ad_id },
      );
      expect(stored).to.deep.equal([{ owner_id: maker.id, available: stored[0].total, total: '100000000' }]);
    });
  });

  describe('when an appeal is opened already approved, decided and resolved', () => {
    it('then it is open, created by the caller, undecided, under a server id', async () => {
      const user = await newUser();
      const staff = await newUser({ roles: ['user', 'compliance'] });
      const order = await completedPayment(user);
      const res = await postAppeal(user, {
        order_id: order.order_id,
        reason: 'payment_not_received',
        description: 'the money never arrived',
        status: 'approved',
        decided_by: staff.id,
        decided_at: ANCIENT,
        resolution: 'refund',
        created_by: staff.id,
        appeal_id: UNKNOWN_ID,
        sla_deadline: ANCIENT,
      });
      expect(res.status, res.text).to.equal(201);
      const appeal = res.body as Record<string, unknown>;
      expect(appeal.status).to.equal('open');
      expect(appeal.created_by).to.equal(user.id);
      expect(appeal).to.not.have.property('decided_by');
      expect(appeal.decided_at).to.equal(null);
      expect(appeal.resolution).to.equal(null);
      expect(appeal.appeal_id).not.to.equal(UNKNOWN_ID);
      expect(appeal.sla_deadline).not.to.equal(ANCIENT);
      const after = await waitForOrder(user, order.order_id);
      expect(after.status).to.equal('completed');
    });
  });

  describe('when a decision names another decider', () => {
    it('then the appeal records the caller as decider', async () => {
      const user = await newUser();
      const staff = await newUser({ roles: ['user', 'compliance'] });
      const other = await newUser({ roles: ['user', 'compliance'] });
      const order = await completedPayment(user);
      const opened = await postAppeal(user, { order_id: order.order_id, reason: 'other', description: 'please look' });
      expect(opened.status, opened.text).to.equal(201);
      const id = (opened.body as { appeal_id: string }).appeal_id;
      const res = await call('put', `/appeals/${id}/reject`, {
        token: staff.token,
        body: { note: 'nothing wrong', decided_by: other.id, deciderId: other.id, status: 'approved' },
      });
      expect(res.status, res.text).to.equal(200);
      expect((res.body as { status: string; decided_by: string }).status).to.equal('rejected');
      expect((res.body as { decided_by: string }).decided_by).to.equal(staff.id);
    });
  });

  describe('when a webhook endpoint or blocklist entry is created with server-owned fields', () => {
    it('then the owner, secret, state and author are the server’s', async () => {
      const user = await newUser();
      const other = await newUser();
      const res = await call('post', '/webhooks/endpoints', {
        token: user.token,
        body: { url: 'https://93.184.215.14/hook', user_id: other.id, secret: 'chosen-secret', enabled: false, endpoint_id: UNKNOWN_ID },
      });
      expect(res.status, res.text).to.equal(201);
      const endpoint = res.body as { endpoint_id: string; secret: string; enabled: boolean };
      expect(endpoint.secret).not.to.equal('chosen-secret');
      expect(endpoint.enabled).to.equal(true);
      expect(endpoint.endpoint_id).not.to.equal(UNKNOWN_ID);
      const stored = await rows<{ user_id: string }>('SELECT user_id FROM webhook_endpoints WHERE id = :id', { id: endpoint.endpoint_id });
      expect(stored).to.deep.equal([{ user_id: user.id }]);

      const staff = await newUser({ roles: ['user', 'compliance'] });
      const entry = (await blocklist(staff, {
        type: 'crypto_address',
        value: `bc1q${randomUUID().replace(/-/g, '')}`,
        created_by: other.id,
        entry_id: UNKNOWN_ID,
        created_at: ANCIENT,
      } as never)) as { entry_id: string; created_by?: string; created_at?: string };
      expect(entry.entry_id).not.to.equal(UNKNOWN_ID);
      expect(entry.created_by).to.equal(staff.id);
      expect(entry.created_at).not.to.equal(ANCIENT);
    });
  });
});
