import { expect } from 'chai';
import { api, newUser } from './support/api';

describe('queue dashboard', () => {
  describe('when nobody is signed in', () => {
    it('then /admin/queues is a 401 problem', async () => {
      const res = await api().get('/admin/queues');
      expect(res.status).to.equal(401);
      expect(res.headers['content-type']).to.match(/^application\/problem\+json/);
      expect((res.body as { code: string }).code).to.equal('unauthenticated');
    });

    it('then a forged token is a 401 too, and sets no cookie', async () => {
      const res = await api().get('/admin/queues?access_token=not.a.token');
      expect(res.status).to.equal(401);
      expect(res.headers['set-cookie']).to.equal(undefined);
    });
  });

  describe('when a user who is not an admin comes', () => {
    it('then it is a 403 problem, with a bearer header or the access_token parameter', async () => {
      const user = await newUser({ roles: ['user', 'compliance'] });
      const withHeader = await api().get('/admin/queues').set(user.auth);
      expect(withHeader.status).to.equal(403);
      expect(withHeader.headers['content-type']).to.match(/^application\/problem\+json/);
      expect((withHeader.body as { code: string }).code).to.equal('forbidden');
      const withParameter = await api().get(`/admin/queues?access_token=${user.token}`);
      expect(withParameter.status).to.equal(403);
      expect(withParameter.headers['set-cookie']).to.equal(undefined);
    });
  });

  describe('when an admin comes', () => {
    it('then a bearer header opens the dashboard and its API lists the queues', async () => {
      const admin = await newUser({ roles: ['user', 'admin'] });
      const page = await api().get('/admin/queues').set(admin.auth);
      expect(page.status).to.equal(200);
      expect(page.headers['content-type']).to.match(/^text\/html/);
      expect(page.text).to.include('<base href="/admin/queues/"');
      const queues = await api().get('/admin/queues/api/queues').set(admin.auth);
      expect(queues.status).to.equal(200);
      const names = (queues.body as { queues: { name: string }[] }).queues.map((q) => q.name);
      expect(names).to.include.members(['maintenance', 'discovery']);
    });

    it('then ?access_token= is swapped for an HttpOnly, SameSite=Strict cookie on /admin/queues, which opens it', async () => {
      const admin = await newUser({ roles: ['user', 'admin'] });
      const first = await api().get(`/admin/queues?access_token=${admin.token}`).redirects(0);
      expect(first.status).to.equal(303);
      expect(first.headers.location).to.equal('/admin/queues');
      const [cookie] = first.headers['set-cookie'] as unknown as string[];
      expect(cookie).to.match(/^paygate_admin_token=[^;]+;/);
      expect(cookie).to.include('HttpOnly');
      expect(cookie).to.include('SameSite=Strict');
      expect(cookie).to.include('Path=/admin/queues');
      expect(cookie).to.match(/Max-Age=\d+/);

      const pair = cookie.split(';')[0];
      const page = await api().get('/admin/queues').set('Cookie', pair);
      expect(page.status).to.equal(200);
      const queues = await api().get('/admin/queues/api/queues').set('Cookie', pair);
      expect(queues.status).to.equal(200);
    });
  });
});
