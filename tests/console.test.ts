import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { expect } from 'chai';
import type { Locator, Page } from 'playwright-core';
import { User } from '../models';
import {
  api,
  blocklist,
  completedPayment,
  initiate,
  mpesaPayment,
  newUser,
  postAppeal,
  uniqueKenyanPhone,
  waitForOrder,
} from './support/api';
import { withEnv } from './support/config-env';
import { ARTIFACTS, launchBrowser, type ConsoleBrowser } from './support/browser';
import { ROOT } from './support/local-tools';
import { stack } from './support/stack';
import { fundWallets } from './support/funding';
import { strandedPayout } from './support/unresolved';
import { openCaseAbout } from './support/cases';
import { rows } from './support/db';
import { until } from './support/wait';
import { insufficientFunds } from './support/rails';

/**
 * The console in headless Chromium, driven only by clicking and typing: every section against the real
 * stack. Screenshots go to tests/artifacts/; the README's screenshot to docs/console.png with UPDATE_DOCS_SCREENSHOT=1.
 */
describe('console (headless Chromium)', function () {
  this.timeout(120_000);
  let browser: ConsoleBrowser;
  let page: Page;
  const password = 'a-long-enough-password';
  const email = (tag: string) => `console-${tag}-${Date.now()}-${randomUUID().slice(0, 6)}@example.com`;
  const customer = email('customer');
  const officer = email('officer');
  const section = (id: string): Locator => page.locator(`section#${id}`);
  const shot = (name: string) => page.screenshot({ path: path.join(ARTIFACTS, `console-${name}.png`), fullPage: true });

  async function register(address: string, fullName: string) {
    const s = section('register');
    await s.getByLabel('E-mail').fill(address);
    await s.getByLabel('Password').fill(password);
    await s.getByLabel('Full name').fill(fullName);
    await s.getByRole('button', { name: 'Register' }).click();
    await s
      .locator('.ok')
      .filter({ hasText: `Registered ${address}` })
      .waitFor();
  }

  async function logIn(address: string) {
    const s = section('login');
    await s.getByLabel('E-mail').fill(address);
    await s.getByLabel('Password').fill(password);
    await s.getByRole('button', { name: 'Log in' }).click();
    await page
      .locator('#session-state')
      .filter({ hasText: `Logged in as ${address}` })
      .waitFor();
  }

  before(async function () {
    browser = await launchBrowser();
    page = await browser.context.newPage();
    await page.goto(`${stack.baseUrl}/`);
  });

  after(async () => {
    await browser?.close();
  });

  it('serves one page, logged out, linking the OpenAPI description and the docs', async () => {
    expect(await page.title()).to.equal('Paygate console');
    expect(await page.locator('#session-state').textContent()).to.equal('Logged out');
    expect(await page.getByRole('button', { name: 'Log out' }).isVisible()).to.equal(false);
    expect(await page.getByRole('link', { name: 'OpenAPI description' }).getAttribute('href')).to.equal('/openapi.json');
    expect(await page.getByRole('link', { name: 'Interactive API docs' }).getAttribute('href')).to.equal('/docs');
    const headings = await page.locator('section h2').allTextContents();
    for (const name of [
      'Register user',
      'Login',
      'Wallet',
      'Order status',
      'Bulk payouts',
      'Initiate payment',
      'Exchange discovery',
      'Bank discovery',
      'Create P2P ad',
      'Create appeal',
      'Compliance commands',
    ]) {
      expect(
        headings.some((h) => h.startsWith(name)),
        name,
      ).to.equal(true);
    }
    await shot('logged-out');
  });

  it('shows problem+json errors as title and detail', async () => {
    const s = section('login');
    await s.getByLabel('E-mail').fill('nobody-here@example.com');
    await s.getByLabel('Password').fill('not-the-password');
    await s.getByRole('button', { name: 'Log in' }).click();
    const alert = s.getByRole('alert');
    await alert.waitFor();
    const expected = await api().post('/api/v1/auth/login').send({ email: 'nobody-here@example.com', password: 'not-the-password' });
    const problem = expected.body as { title: string; detail: string };
    expect(await alert.locator('.title').textContent()).to.equal(problem.title);
    expect(await alert.locator('.detail').textContent()).to.equal(problem.detail);
    expect(await page.locator('#session-state').textContent()).to.equal('Logged out');

    const r = section('register');
    await r.getByLabel('E-mail').fill(email('short-password'));
    await r.getByLabel('Password').fill('short');
    await r.getByLabel('Full name').fill('Short Password');
    await r.getByRole('button', { name: 'Register' }).click();
    await r.getByRole('alert').waitFor();
    expect(await r.locator('.error .title').textContent()).to.match(/\S/);
    expect(await r.locator('.error li').allTextContents()).to.satisfy((items: string[]) => items.some((i) => i.includes('password')));
    await shot('errors');
  });

  it('registers, logs in, deposits KES 2,000 by M-Pesa, pays out 1,500 and reads a statement ending at 500', async () => {
    await register(customer, 'Console Customer');
    await logIn(customer);
    // Money in first: payments are paid from the wallet.
    const w = section('wallet');
    await w.getByRole('button', { name: 'Show balances' }).click();
    expect(await w.locator('.deposit-reference').textContent()).to.match(/^PG[0-9A-Z]{10}$/);
    expect(await w.locator('.instructions').textContent()).to.match(/Pay Bill/);
    await w.getByLabel('Deposit amount (KES)').fill('2000.00');
    await w.getByLabel('M-Pesa phone').fill(uniqueKenyanPhone());
    await w.getByRole('button', { name: 'Deposit by M-Pesa' }).click();
    await w
      .locator('[data-result="deposit"] .status')
      .filter({ hasText: /^completed$/ })
      .waitFor({ timeout: 30_000 });
    await w
      .locator('[data-result="wallet"] td')
      .filter({ hasText: /^2000\.00$/ })
      .first()
      .waitFor();
    const s = section('initiate-payment');
    await s.getByRole('combobox', { name: /^Method/ }).selectOption('mobile_money');
    await s.getByLabel('Amount').fill('1500.00');
    await s.getByLabel('Currency').fill('KES');
    await s.getByLabel('Provider').fill('mpesa');
    await s.getByLabel('Phone').fill('+254712345678');
    await s.getByLabel('Description').fill('console payment');
    await s.getByRole('button', { name: 'Pay' }).click();
    await section('order-status')
      .locator('.status')
      .filter({ hasText: /^completed$/ })
      .waitFor({ timeout: 30_000 });
    const orderId = (await section('order-status').locator('.order-id').textContent()) ?? '';
    const user = await User.findOne({ where: { email: customer } });
    const order = await api()
      .get(`/api/v1/payments/orders/${orderId}`)
      .set('Authorization', `Bearer ${await page.evaluate<string>("sessionStorage.getItem('paygate.token') ?? ''")}`);
    expect(order.status).to.equal(200);
    expect((order.body as { status: string }).status).to.equal('completed');
    expect(user).to.not.equal(null);
    await w.getByRole('button', { name: 'Show statement' }).click();
    const lines = w.locator('[data-result="statement"] tbody tr');
    await lines.nth(1).waitFor();
    const cells = async (i: number) => (await lines.nth(i).locator('td').allTextContents()).slice(1, 4);
    expect(await cells(0)).to.deep.equal(['hold', '-1500.00', '500.00']);
    expect(await cells(1)).to.deep.equal(['deposit', '2000.00', '2000.00']);
    await shot('payment-completed');
  });

  it('lists exchanges and banks', async () => {
    const e = section('exchanges');
    await e.getByRole('button', { name: 'List exchanges' }).click();
    await e.locator('tbody tr').first().waitFor();
    expect(await e.locator('tbody tr').count()).to.be.greaterThan(0);
    const b = section('banks');
    await b.getByRole('button', { name: 'List banks' }).click();
    await b.locator('tbody tr').first().waitFor();
    expect(await b.locator('tbody').textContent()).to.contain('68');
  });

  it('posts a P2P ad as a verified user', async () => {
    // Arrangement: KYC verified, as an officer would record it, and the USDT the ad puts in escrow paid in.
    await User.update({ kycStatus: 'verified' }, { where: { email: customer } });
    const seller = await User.findOne({ where: { email: customer } });
    await fundWallets(seller!.id, { USDT: 100_000000n });
    const s = section('p2p-ad');
    await s.getByLabel('Side').selectOption('sell');
    await s.getByLabel('Price (KES)').fill('130.00');
    await s.getByLabel('Total amount').fill('100.000000');
    await s.getByLabel('Minimum order (KES)').fill('100.00');
    await s.getByLabel('Maximum order (KES)').fill('13000.00');
    await s.getByLabel('Terms').fill('release within 15 minutes');
    await s.getByRole('button', { name: 'Post ad' }).click();
    await s.locator('.ad-id').waitFor();
    const adId = (await s.locator('.ad-id').textContent()) ?? '';
    const ad = await api().get(`/api/v1/p2p/ads/${adId}`);
    expect(ad.status, JSON.stringify(ad.body)).to.equal(200);
  });

  it('opens an appeal on the order', async () => {
    const s = section('appeal');
    expect(await s.getByLabel('Order id to appeal').inputValue()).to.match(/\S/);
    await s.getByLabel('Reason').selectOption('payment_not_received');
    await s.getByLabel('What happened').fill('The recipient says the money never arrived.');
    await s.getByRole('button', { name: 'Open appeal' }).click();
    await s.locator('.appeal-id').waitFor();
    expect(await s.locator('.appeal-id').textContent()).to.match(/\S/);
    expect(await s.locator('.status').textContent()).to.match(/\S/);
  });

  it('creates an API key whose secret works once copied, lists it, and revokes it', async () => {
    const s = section('api-keys');
    await s.getByLabel('Key name').fill('console test');
    await s.getByRole('button', { name: 'Create key' }).click();
    await s.locator('.key-secret').waitFor();
    const secret = (await s.locator('.key-secret').textContent()) ?? '';
    expect(secret).to.match(/^sk_test_[A-Za-z0-9_-]{43}$/);
    expect((await api().get('/api/v1/wallets').set('Authorization', `Bearer ${secret}`)).status).to.equal(200);
    await s.getByRole('button', { name: 'List keys' }).click();
    await s
      .locator('[data-result="key-list"] td')
      .filter({ hasText: secret.slice(0, 16) })
      .waitFor();
    expect(await s.locator('[data-result="key-list"]').textContent()).to.not.include(secret.slice(16));
    await s.getByRole('button', { name: 'Revoke key' }).click();
    await s.locator('[data-result="key-revoke"]').filter({ hasText: 'Revoked' }).waitFor();
    expect((await api().get('/api/v1/wallets').set('Authorization', `Bearer ${secret}`)).status).to.equal(401);
  });

  it('refuses compliance commands to a customer, on the page', async () => {
    const s = section('compliance');
    await s.getByRole('button', { name: 'List blocklist' }).click();
    await s.getByRole('alert').waitFor();
    expect(await s.locator('.error .title').textContent()).to.match(/\S/);
  });

  it('as compliance, adds to the blocklist, lists it and pulls a report', async () => {
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.locator('#session-state').filter({ hasText: 'Logged out' }).waitFor();
    await register(officer, 'Console Officer');
    await User.update({ roles: ['user', 'compliance'] }, { where: { email: officer } });
    await logIn(officer);
    const s = section('compliance');
    const phone = uniqueKenyanPhone();
    await s.getByLabel('Entry type').selectOption('phone');
    await s.getByLabel('Value', { exact: true }).fill(phone);
    await s.getByLabel('Reason for listing').fill('confirmed fraud, console test');
    await s.getByRole('button', { name: 'Add entry' }).click();
    await s.locator('[data-result="blocklist-add"] .ok').waitFor();
    await s.getByLabel('Filter by value').fill(phone);
    await s.getByRole('button', { name: 'List blocklist' }).click();
    await s.locator('[data-result="blocklist-list"] tbody tr').filter({ hasText: phone }).waitFor();
    await s.getByRole('button', { name: 'Pull report' }).click();
    await s.locator('[data-result="report"] .ok').waitFor({ timeout: 60_000 });
    expect(await s.locator('[data-result="report"] pre').textContent()).to.contain('compliance-report-');
    await shot('compliance');
    await page.evaluate('window.scrollTo(0, 0)');
    // The README's screenshot is refreshed on request only, so that test runs leave the work tree clean.
    const readmeShot = process.env.UPDATE_DOCS_SCREENSHOT
      ? path.join(ROOT, 'docs', 'console.png')
      : path.join(ROOT, 'tests', 'artifacts', 'console.png');
    await page.screenshot({ path: readmeShot });
  });

  it('as compliance, decides screening reviews: a cleared payment completes, a confirmed one is rejected', async () => {
    // Logged in as the officer (previous test). Two payments held for review, made through the API.
    const family = `Kv${randomUUID()
      .replace(/[^a-f]/g, '')
      .slice(0, 5)}`;
    const staff = await newUser({ roles: ['user', 'compliance'] });
    await blocklist(staff, { type: 'name', value: `Wanjala Simiyu ${family}` });
    const payer = await newUser();
    const hold = async () => {
      const res = await initiate(
        payer,
        mpesaPayment({
          method: 'bank_transfer',
          destination: { bank_code: '01', account_number: '1234567894', account_name: `Wanjala ${family}` },
        }),
      );
      return (res.body as { order_id: string }).order_id;
    };
    const clearing = await hold();
    const s = section('compliance');
    const decideInConsole = async (orderId: string, decision: 'confirm' | 'clear', status: string) => {
      await s.getByLabel('Review status').selectOption('needs_review');
      const row = s.locator('[data-result="reviews-list"] tbody tr').filter({ hasText: orderId });
      // The payment's workflow records the review after the initiate has answered: list again until it shows.
      await until(
        `the review of order ${orderId} in the console's list`,
        async () => {
          await s.getByRole('button', { name: 'List reviews' }).click();
          return row.waitFor({ timeout: 2_000 }).then(
            () => true,
            () => undefined,
          );
        },
        60_000,
        0,
      );
      const reviewId = ((await row.locator('td').first().textContent()) ?? '').trim();
      await s.getByLabel('Review id').fill(reviewId);
      await s.locator('form[data-action="review-decide"] select[name="decision"]').selectOption(decision);
      await s.getByLabel('Decision note').fill(`console test: ${decision}`);
      await s.getByRole('button', { name: 'Decide review' }).click();
      await s.locator('[data-result="review-decide"] .status').filter({ hasText: status }).waitFor();
    };
    await decideInConsole(clearing, 'clear', 'cleared');
    expect((await waitForOrder(payer, clearing)).status).to.equal('completed');

    // The cleared pair now passes: a different listed name for the confirmation.
    await blocklist(staff, { type: 'name', value: `Wanjala Barasa ${family}x` });
    const confirming = await (async () => {
      const res = await initiate(
        payer,
        mpesaPayment({
          method: 'bank_transfer',
          destination: { bank_code: '01', account_number: '1234567895', account_name: `W. B. ${family}x` },
        }),
      );
      return (res.body as { order_id: string }).order_id;
    })();
    await decideInConsole(confirming, 'confirm', 'confirmed');
    const rejected = await waitForOrder(payer, confirming);
    expect(rejected).to.deep.include({ status: 'rejected', failure_code: 'blocked_by_compliance' });
    await shot('screening-reviews');
  });

  it('as compliance, lists unresolved payouts and asks to resolve one; only a second staff member decides the request', async () => {
    // Logged in as the officer (previous tests). A payout whose rail never answered, for two days.
    const payer = await newUser({ funded: false });
    const orderId = await strandedPayout(payer.id);
    const s = section('unresolved');
    await s.getByRole('button', { name: 'List unresolved payouts' }).click();
    await s.locator('[data-result="unresolved-list"] tbody tr').filter({ hasText: orderId }).waitFor();
    await s.getByLabel('Unresolved order id').fill(orderId);
    await s.getByLabel('What the rail shows').selectOption('not_sent');
    await s.getByLabel('Rail evidence').fill('M-Pesa org portal: no payout to this number on that day');
    await s.getByRole('button', { name: 'Ask to resolve' }).click();
    await s.locator('[data-result="unresolved-resolve"] .status').filter({ hasText: 'pending' }).waitFor();
    const requestId = ((await s.locator('.request-id').textContent()) ?? '').trim();
    expect(await s.getByLabel('Request id').inputValue()).to.equal(requestId);
    // The one who asked cannot approve it.
    await s.getByLabel('Four-eyes decision').selectOption('approve');
    await s.getByRole('button', { name: 'Decide request' }).click();
    await s.locator('[data-result="approval-decide"]').getByRole('alert').waitFor();

    await page.getByRole('button', { name: 'Log out' }).click();
    await page.locator('#session-state').filter({ hasText: 'Logged out' }).waitFor();
    const checker = await newUser({ roles: ['user', 'admin'], funded: false });
    await logIn(checker.email);
    await s.getByRole('button', { name: 'List pending four-eyes requests' }).click();
    const row = s.locator('[data-result="approvals-list"] tbody tr').filter({ hasText: requestId });
    await row.waitFor();
    expect(await row.textContent())
      .to.contain('resolve_unresolved_payout')
      .and.contain(orderId);
    await s.getByLabel('Request id').fill(requestId);
    await s.getByLabel('Four-eyes decision').selectOption('reject');
    await s.getByLabel('What you checked').fill('the statement does not show it yet');
    await s.getByRole('button', { name: 'Decide request' }).click();
    await s.locator('[data-result="approval-decide"] .status').filter({ hasText: 'rejected' }).waitFor();
    await shot('unresolved-payouts');
  });

  it('as a second staff member, lists the refunds waiting for a second approver and approves one: it is paid', async () => {
    const restore = withEnv({ FOUR_EYES_ABOVE_KES: '1000' });
    try {
      const owner = await newUser();
      const order = await completedPayment(owner);
      const opened = await postAppeal(owner, { order_id: order.order_id, reason: 'unauthorized', description: 'not me' });
      const appealId = (opened.body as { appeal_id: string }).appeal_id;
      const maker = await newUser({ roles: ['compliance'], funded: false });
      const first = await api().put(`/api/v1/appeals/${appealId}/approve`).set(maker.auth).send({ note: 'statement checked' });
      expect(first.status, JSON.stringify(first.body)).to.equal(202);

      await page.getByRole('button', { name: 'Log out' }).click();
      await page.locator('#session-state').filter({ hasText: 'Logged out' }).waitFor();
      const checker = await newUser({ roles: ['user', 'compliance'], funded: false });
      await logIn(checker.email);
      const s = section('unresolved');
      await s.getByRole('button', { name: 'List refunds waiting for a second approver' }).click();
      const row = s.locator('[data-result="refunds-awaiting"] tbody tr').filter({ hasText: appealId });
      await row.waitFor();
      expect(await row.textContent())
        .to.contain('1500.00')
        .and.contain(maker.id);
      await s.getByLabel('Appeal id').fill(appealId);
      await s.getByLabel('Refund checked against').fill('the M-Pesa statement');
      await s.getByRole('button', { name: 'Approve the refund (second pair of eyes)' }).click();
      await s.locator('[data-result="refund-second-approval"] .status').filter({ hasText: 'approved' }).waitFor();
      expect((await waitForOrder(owner, order.order_id)).status).to.equal('reversed');
    } finally {
      restore();
    }
  });

  it('as a second staff member, lists the open cases and closes one whose closure waits: it is closed', async () => {
    const customer = await newUser({ funded: false });
    const caseId = await openCaseAbout(customer.id);
    const maker = await newUser({ roles: ['compliance'], funded: false });
    const first = await api()
      .post(`/api/v1/compliance/cases/${caseId}/close`)
      .set(maker.auth)
      .send({ outcome: 'false_positive', note: 'one household' });
    expect(first.status, JSON.stringify(first.body)).to.equal(202);

    await page.getByRole('button', { name: 'Log out' }).click();
    await page.locator('#session-state').filter({ hasText: 'Logged out' }).waitFor();
    const checker = await newUser({ roles: ['user', 'compliance'], funded: false });
    await logIn(checker.email);
    const s = section('cases');
    await s.getByRole('button', { name: 'List open cases' }).click();
    const row = s.locator('[data-result="cases-list"] tbody tr').filter({ hasText: caseId });
    await row.waitFor();
    expect(await row.textContent())
      .to.contain(customer.id)
      .and.contain(`false_positive by ${maker.id}`);
    await s.getByLabel('Case id').fill(caseId);
    await s.getByLabel('Outcome').selectOption('false_positive');
    await s.getByLabel('Grounds').fill('agreed: payers are one household');
    await s.getByRole('button', { name: 'Close case' }).click();
    await s.locator('[data-result="case-close"] .status').filter({ hasText: 'closed' }).waitFor();
    const [closed] = await rows<{ status: string; closed_by: string }>(
      'SELECT status, closed_by FROM monitoring_cases WHERE id = :caseId',
      {
        caseId,
      },
    );
    expect(closed).to.deep.equal({ status: 'closed', closed_by: checker.id });
    await shot('cases');
  });

  it('shows a bulk payout awaiting approval to its owner without an approve button; a staff member opens it from the four-eyes list and approves it: its progress bar fills and the failed item is listed', async () => {
    const restore = withEnv({ FOUR_EYES_ABOVE_KES: '300' });
    try {
      const owner = await newUser({ funded: false });
      await fundWallets(owner.id, { KES: 1_000_000n });
      const payout = (reference: string, amount = '100.00', phone = uniqueKenyanPhone()) => ({
        ...mpesaPayment({ amount, destination: { provider: 'mpesa', phone } }),
        reference,
      });
      const items = [payout('CON-1'), payout('CON-2', `100.${insufficientFunds.cents}`, insufficientFunds.phone), payout('CON-3')];
      const res = await api().post('/api/v1/payouts/batches').set(owner.auth).set('Idempotency-Key', randomUUID()).send({ items });
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      const batch = res.body as { batch_id: string; status: string; approval_request_id: string };
      expect(batch.status).to.equal('awaiting_approval');

      const s = section('batches');
      const view = s.locator('[data-result="batch-view"]');
      // Its owner sees it waiting, and may cancel it, but has no approval to give.
      // Whoever an earlier test left logged in (or nobody, when this test runs alone).
      if (await page.getByRole('button', { name: 'Log out' }).isVisible()) {
        await page.getByRole('button', { name: 'Log out' }).click();
        await page.locator('#session-state').filter({ hasText: 'Logged out' }).waitFor();
      }
      await logIn(owner.email);
      await s.getByRole('button', { name: 'List my batches' }).click();
      await s.locator('[data-result="batch-list"] tbody tr').filter({ hasText: 'awaiting_approval' }).waitFor();
      expect(await s.getByLabel('Batch id').inputValue()).to.equal(batch.batch_id);
      await s.getByRole('button', { name: 'Show batch' }).click();
      await view.locator('.status').filter({ hasText: 'awaiting_approval' }).waitFor();
      expect(await s.getByRole('button', { name: 'Approve batch' }).count()).to.equal(0);
      expect(await s.getByRole('button', { name: 'Cancel batch (owner)' }).isVisible()).to.equal(true);

      await page.getByRole('button', { name: 'Log out' }).click();
      await page.locator('#session-state').filter({ hasText: 'Logged out' }).waitFor();
      const checker = await newUser({ roles: ['user', 'compliance'], funded: false });
      await logIn(checker.email);
      // The pending four-eyes requests name the batch, and open it in the Bulk payouts section.
      await s.getByLabel('Batch id').fill('');
      const requests = section('unresolved');
      await requests.getByRole('button', { name: 'List pending four-eyes requests' }).click();
      await requests.locator('[data-result="approvals-list"] tbody tr').filter({ hasText: batch.approval_request_id }).waitFor();
      expect(await s.getByLabel('Batch id').inputValue()).to.equal(batch.batch_id);
      await s.getByLabel('Approval note (staff)').fill('payroll file checked with the payer');
      await s.getByRole('button', { name: 'Show batch' }).click();
      await view.locator('.status').filter({ hasText: 'awaiting_approval' }).waitFor();
      await view.getByRole('button', { name: 'Approve batch' }).waitFor();
      expect(await view.locator('.request-id').textContent()).to.equal(batch.approval_request_id);
      expect(await view.locator('progress.batch-progress').getAttribute('value')).to.equal('0');
      await s.getByRole('button', { name: 'Approve batch' }).click();
      // Followed live: the view is read again until the batch ends.
      await view.locator('.status').filter({ hasText: 'completed' }).waitFor({ timeout: 60_000 });
      expect(await view.locator('progress.batch-progress').getAttribute('value')).to.equal('1');
      const failed = view.locator('.batch-failures tbody tr');
      expect(await failed.count()).to.equal(1);
      expect(await failed.textContent())
        .to.contain('CON-2')
        .and.contain('insufficient_funds');
      const [request] = await rows<{ status: string; decided_by: string }>(
        'SELECT status, decided_by FROM approval_requests WHERE id = :id',
        {
          id: batch.approval_request_id,
        },
      );
      expect(request).to.deep.equal({ status: 'approved', decided_by: checker.id });
      await shot('bulk-payouts');
    } finally {
      restore();
    }
  });

  it('fits a phone-sized screen and is reachable by keyboard', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    expect(overflow).to.be.at.most(0);
    await shot('phone');
    // From the login e-mail field, Tab reaches the password and then the button.
    const login = section('login');
    await login.getByLabel('E-mail').focus();
    await page.keyboard.press('Tab');
    expect(await page.evaluate<string>("document.activeElement?.getAttribute('name') ?? ''")).to.equal('password');
    await page.keyboard.press('Tab');
    expect(await page.evaluate<string>("document.activeElement?.textContent ?? ''")).to.equal('Log in');
    await page.setViewportSize({ width: 1280, height: 900 });
  });
});
