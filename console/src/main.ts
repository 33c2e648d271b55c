/**
 * The Paygate console: one page over the public API (`/api/v1`). Every section is a form; each submit
 * calls one endpoint and renders the answer, or the problem's title and detail.
 */

const API = '/api/v1';
const TOKEN_KEY = 'paygate.token';
const TERMINAL = new Set(['completed', 'failed', 'rejected', 'reversed']);

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

interface Problem {
  title: string;
  detail: string;
  status: number;
  errors: { field: string; message: string }[];
}

class ApiError extends Error {
  constructor(readonly problem: Problem) {
    super(`${problem.title}: ${problem.detail}`);
  }
}

let token: string | null = sessionStorage.getItem(TOKEN_KEY);
/** The logged-in user's roles (from `/auth/me`): staff see the four-eyes buttons. */
let roles: string[] = [];
const isStaff = () => roles.includes('compliance') || roles.includes('admin');

const isObject = (value: Json | undefined): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

const text = (value: Json | undefined): string =>
  value === undefined || value === null ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);

/** One member of an answer as text; empty when the answer is not an object (e.g. a problem already shown). */
const member = (value: Json, key: string): string => (isObject(value) ? text(value[key]) : '');

/** The rows of a list answer (`{data: [...]}`); none when it is anything else. */
const pageRows = (page: Json): JsonObject[] => (isObject(page) && Array.isArray(page.data) ? page.data.filter(isObject) : []);

/** A form's comma-separated list, without blanks. */
const commaList = (value: string): string[] =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);

/** A random v4 UUID for Idempotency-Key; works outside secure contexts too. */
function uuid(): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

function toProblem(status: number, body: Json): Problem {
  if (isObject(body) && typeof body.title === 'string') {
    const errors = Array.isArray(body.errors)
      ? body.errors.filter(isObject).map((e) => ({ field: text(e.field), message: text(e.message) }))
      : [];
    return { title: body.title, detail: text(body.detail), status, errors };
  }
  return { title: `HTTP ${status}`, detail: typeof body === 'string' ? body : 'The server gave no details.', status, errors: [] };
}

async function call(method: string, path: string, options: { body?: JsonObject; idempotent?: boolean } = {}): Promise<Json> {
  const headers: Record<string, string> = { Accept: 'application/json, application/problem+json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (options.body) headers['Content-Type'] = 'application/json';
  if (options.idempotent) headers['Idempotency-Key'] = uuid();
  let res: Response;
  try {
    res = await fetch(`${API}${path}`, { method, headers, body: options.body ? JSON.stringify(options.body) : undefined });
  } catch {
    throw new ApiError({ title: 'Network error', detail: 'The API could not be reached.', status: 0, errors: [] });
  }
  const raw = await res.text();
  let body: Json = raw;
  try {
    body = raw ? (JSON.parse(raw) as Json) : null;
  } catch {
    // not JSON: keep the text
  }
  if (!res.ok) {
    if (res.status === 401 && token && path !== '/auth/login') setToken(null);
    throw new ApiError(toProblem(res.status, body));
  }
  return body;
}

// --- rendering --------------------------------------------------------------------------------------

function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...children: (Node | string)[]) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  node.append(...children);
  return node;
}

function resultBox(name: string): HTMLElement {
  const box = document.querySelector<HTMLElement>(`[data-result="${name}"]`);
  if (!box) throw new Error(`no result area ${name}`);
  return box;
}

function show(name: string, ...nodes: Node[]): void {
  resultBox(name).replaceChildren(...nodes);
}

function showError(name: string, err: unknown): void {
  const problem =
    err instanceof ApiError ? err.problem : { title: 'Error', detail: err instanceof Error ? err.message : String(err), errors: [] };
  const box = el(
    'div',
    { class: 'error', role: 'alert' },
    el('span', { class: 'title' }, problem.title),
    ' ',
    el('span', { class: 'detail' }, problem.detail),
  );
  if (problem.errors.length > 0) {
    box.append(el('ul', {}, ...problem.errors.map((e) => el('li', {}, `${e.field}: ${e.message}`))));
  }
  show(name, box);
}

const ok = (...children: (Node | string)[]) => el('div', { class: 'ok', role: 'status' }, ...children);

function table(rows: JsonObject[], columns: string[]): HTMLElement {
  if (rows.length === 0) return el('p', {}, 'Nothing found.');
  return el(
    'table',
    {},
    el('thead', {}, el('tr', {}, ...columns.map((c) => el('th', { scope: 'col' }, c)))),
    el('tbody', {}, ...rows.map((r) => el('tr', {}, ...columns.map((c) => el('td', {}, text(r[c])))))),
  );
}

const pre = (value: Json) => el('pre', {}, JSON.stringify(value, null, 2));

// --- session ----------------------------------------------------------------------------------------

function setToken(value: string | null): void {
  token = value;
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
  void renderSession();
}

async function renderSession(): Promise<void> {
  const state = document.getElementById('session-state');
  const logout = document.getElementById('logout');
  if (!state || !logout) return;
  document.body.classList.toggle('logged-out', !token);
  logout.hidden = !token;
  if (!token) {
    roles = [];
    state.textContent = 'Logged out';
    return;
  }
  try {
    const me = await call('GET', '/auth/me');
    if (isObject(me)) {
      roles = Array.isArray(me.roles) ? me.roles.map(text) : [];
      state.textContent = `Logged in as ${text(me.email)} (${roles.join(', ') || 'user'}, KYC ${text(me.kyc_status)})`;
    }
  } catch {
    if (!token) state.textContent = 'Logged out';
  }
}

// --- actions ----------------------------------------------------------------------------------------

type Fields = Record<string, string>;

function fields(form: HTMLFormElement): Fields {
  const out: Fields = {};
  for (const [k, v] of new FormData(form).entries()) if (typeof v === 'string') out[k] = v.trim();
  return out;
}

/** Only the non-empty fields among `names`. */
function pick(f: Fields, names: string[]): JsonObject {
  const out: JsonObject = {};
  for (const n of names) if (f[n]) out[n] = f[n];
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function renderOrder(order: Json): Node {
  if (!isObject(order)) return pre(order);
  const events = Array.isArray(order.events) ? order.events.filter(isObject) : [];
  return ok(
    el(
      'p',
      {},
      'Order ',
      el('code', { class: 'order-id' }, text(order.order_id)),
      ': ',
      el('span', { class: 'status' }, text(order.status)),
    ),
    order.failure_reason ? el('p', {}, `${text(order.failure_code)}: ${text(order.failure_reason)}`) : '',
    table(events, ['status', 'at', 'detail']),
  );
}

/** Poll the order until it reaches a terminal status, rendering every state it passes through. */
async function follow(orderId: string): Promise<void> {
  for (let attempt = 0; ; attempt += 1) {
    const order = await call('GET', `/payments/orders/${encodeURIComponent(orderId)}`);
    const status = member(order, 'status');
    show('order-status', renderOrder(order));
    if (TERMINAL.has(status) || attempt > 600) return;
    await sleep(attempt < 20 ? 500 : 2000);
  }
}

// --- bulk payouts -------------------------------------------------------------------------------------

const BATCH_COUNTS = ['pending', 'sent', 'completed', 'failed', 'rejected', 'cancelled'];
/** While a batch runs its view is read again this often. */
const BATCH_POLL_MS = 2000;
/** The batch the console follows: a newer "Show batch" stops following the older one. */
let followedBatch = 0;

/** A batch's failed and rejected items (the first page of each), with their failure codes. */
async function failedItems(batchId: string, counts: JsonObject): Promise<JsonObject[]> {
  const out: JsonObject[] = [];
  for (const status of ['failed', 'rejected']) {
    if (Number(counts[status] ?? 0) === 0) continue;
    const page = await call('GET', `/payouts/batches/${encodeURIComponent(batchId)}/items?status=${status}&limit=100`);
    out.push(...pageRows(page));
  }
  return out;
}

function renderBatch(batch: JsonObject, failed: JsonObject[], decide: (decision: 'approve' | 'reject' | 'cancel') => void): Node {
  const counts = isObject(batch.counts) ? batch.counts : {};
  const progress = typeof batch.progress === 'number' ? batch.progress : 0;
  const status = text(batch.status);
  const requestId = text(batch.approval_request_id);
  const buttons: HTMLButtonElement[] = [];
  const button = (label: string, decision: 'approve' | 'reject' | 'cancel') => {
    const b = el('button', { type: 'button' }, label);
    b.addEventListener('click', () => {
      for (const other of buttons) other.disabled = true;
      decide(decision);
    });
    buttons.push(b);
    return b;
  };
  // Staff decide a batch awaiting approval (the API refuses anyone else, and its owner); its owner may cancel it.
  if (status === 'awaiting_approval' && isStaff()) {
    button('Approve batch', 'approve');
    button('Reject batch', 'reject');
  }
  if (status === 'awaiting_approval' || status === 'running') button('Cancel batch (owner)', 'cancel');
  return ok(
    el(
      'p',
      {},
      'Batch ',
      el('code', { class: 'batch-id' }, text(batch.batch_id)),
      ': ',
      el('span', { class: 'status' }, status),
      batch.cancel_requested === true && status === 'running' ? ' (cancel asked)' : '',
    ),
    el(
      'p',
      {},
      el('progress', { class: 'batch-progress', max: '1', value: String(progress), 'aria-label': 'Batch progress' }),
      ` ${Math.round(progress * 100)}% of ${text(batch.item_count)} items`,
    ),
    requestId ? el('p', {}, 'Four-eyes request ', el('code', { class: 'request-id' }, requestId)) : '',
    table([counts], BATCH_COUNTS),
    table(
      [
        {
          currency: batch.currency,
          total: batch.total_amount,
          fees: batch.total_fee,
          sent: batch.sent_amount,
          failed: batch.failed_amount,
          cancelled: batch.cancelled_amount,
          returned: batch.returned_amount,
        },
      ],
      ['currency', 'total', 'fees', 'sent', 'failed', 'cancelled', 'returned'],
    ),
    el('h3', {}, 'Failed items'),
    el('div', { class: 'batch-failures' }, table(failed, ['row', 'reference', 'status', 'amount', 'failure_code', 'order_id'])),
    buttons.length > 0 ? el('div', { class: 'batch-actions' }, ...buttons) : '',
  );
}

/** Show a batch, reading it again every few seconds while it runs, until it ends or another batch is shown. */
async function followBatch(batchId: string, note: string): Promise<void> {
  followedBatch += 1;
  const mine = followedBatch;
  const decide = (decision: 'approve' | 'reject' | 'cancel', batch: JsonObject) => {
    const done =
      decision === 'cancel'
        ? call('POST', `/payouts/batches/${encodeURIComponent(batchId)}/cancel`, { idempotent: true })
        : call('POST', `/compliance/approvals/${encodeURIComponent(text(batch.approval_request_id))}/${decision}`, {
            body: note ? { note } : {},
          });
    done.then(() => followBatch(batchId, note)).catch((err: unknown) => showError('batch-view', err));
  };
  for (let attempt = 0; mine === followedBatch; attempt += 1) {
    const batch = await call('GET', `/payouts/batches/${encodeURIComponent(batchId)}`);
    if (!isObject(batch)) return show('batch-view', pre(batch));
    const counts = isObject(batch.counts) ? batch.counts : {};
    const failed = await failedItems(batchId, counts);
    if (mine !== followedBatch) return;
    show(
      'batch-view',
      renderBatch(batch, failed, (decision) => decide(decision, batch)),
    );
    if (batch.status !== 'running' || attempt > 1800) return;
    await sleep(BATCH_POLL_MS);
  }
}

function setField(form: string, name: string, value: string): void {
  const input = document.querySelector<HTMLInputElement>(`form[data-action="${form}"] [name="${name}"]`);
  if (input) input.value = value;
}

/** The caller's balances, with their deposit reference and how to pay in with it. */
async function showWallet(): Promise<void> {
  const wallets = await call('GET', '/wallets');
  if (!isObject(wallets)) return show('wallet', pre(wallets));
  const rows = Array.isArray(wallets.data) ? wallets.data.filter(isObject) : [];
  const reference = text(wallets.deposit_reference);
  show(
    'wallet',
    ok(
      el('p', {}, 'Your deposit reference: ', el('code', { class: 'deposit-reference' }, reference)),
      el(
        'p',
        { class: 'instructions' },
        `To pay in by M-Pesa: Lipa na M-Pesa → Pay Bill → Paygate's business number, account number ${reference}. ` +
          `By bank: transfer to Paygate's collection account at the primary bank, quoting ${reference} as the reference.`,
      ),
      table(rows, ['currency', 'available', 'held', 'pending_in']),
    ),
  );
}

const actions: Record<string, (f: Fields) => Promise<void>> = {
  async wallet() {
    await showWallet();
  },
  async deposit(f) {
    const body: JsonObject = { amount: f.amount, currency: 'KES', method: 'mobile_money', phone: f.phone };
    const accepted = await call('POST', '/wallets/deposits', { body, idempotent: true });
    const depositId = member(accepted, 'deposit_id');
    // The phone is asked to pay (STK Push); the deposit settles when M-Pesa answers.
    for (let attempt = 0; ; attempt += 1) {
      const deposit = await call('GET', `/wallets/deposits/${encodeURIComponent(depositId)}`);
      const status = member(deposit, 'status');
      show(
        'deposit',
        ok(
          'Deposit ',
          el('code', { class: 'deposit-id' }, depositId),
          ': ',
          el('span', { class: 'status' }, status),
          isObject(deposit) && deposit.failure_reason ? ` (${text(deposit.failure_code)}: ${text(deposit.failure_reason)})` : '',
        ),
      );
      if (status !== 'pending' || attempt > 300) break;
      await sleep(attempt < 20 ? 500 : 2000);
    }
    await showWallet().catch((err: unknown) => showError('wallet', err));
  },
  async statement(f) {
    const page = await call('GET', `/wallets/${encodeURIComponent(f.currency.toUpperCase())}/transactions?limit=50`);
    const rows = pageRows(page);
    show('statement', table(rows, ['at', 'kind', 'amount', 'balance_after', 'description']));
  },
  async 'key-create'(f) {
    const scopes = commaList(f.scopes);
    const key = await call('POST', '/api-keys', { body: { name: f.name, mode: f.mode, scopes } });
    show(
      'key-create',
      ok(
        'Key ',
        el('code', { class: 'key-id' }, member(key, 'key_id')),
        ' created. Copy the secret now; it is not shown again: ',
        el('code', { class: 'key-secret' }, member(key, 'secret')),
      ),
    );
    setField('key-revoke', 'key_id', member(key, 'key_id'));
  },
  async 'key-list'() {
    const page = await call('GET', '/api-keys?limit=50');
    const rows = pageRows(page);
    show('key-list', table(rows, ['key_id', 'name', 'mode', 'prefix', 'scopes', 'last_used_at', 'revoked_at', 'expires_at']));
  },
  async 'key-revoke'(f) {
    await call('DELETE', `/api-keys/${encodeURIComponent(f.key_id)}`);
    show('key-revoke', ok('Revoked: its next request is refused.'));
  },
  async register(f) {
    const user = await call('POST', '/auth/register', { body: pick(f, ['email', 'password', 'full_name', 'phone']) });
    show('register', ok(`Registered ${member(user, 'email')}. Log in below.`));
    setField('login', 'email', f.email);
  },
  async login(f) {
    const issued = await call('POST', '/auth/login', { body: { email: f.email, password: f.password } });
    setToken(isObject(issued) ? text(issued.access_token) : null);
    show('login', ok('Logged in.'));
  },
  async 'initiate-payment'(f) {
    const destination = pick(f, [
      'provider',
      'phone',
      'bank_code',
      'account_number',
      'account_name',
      'exchange_id',
      'account_ref',
      'address',
      'network',
      'ad_id',
      'payment_method',
    ]);
    const body: JsonObject = { amount: f.amount, currency: f.currency, method: f.method, destination, ...pick(f, ['description']) };
    const accepted = await call('POST', '/payments/initiate', { body, idempotent: true });
    const orderId = member(accepted, 'order_id');
    show('initiate-payment', ok('Accepted: order ', el('code', {}, orderId), '. Following it under Order status.'));
    setField('order-status', 'order_id', orderId);
    setField('appeal', 'order_id', orderId);
    await follow(orderId).catch((err: unknown) => showError('order-status', err));
  },
  async 'order-status'(f) {
    await follow(f.order_id);
  },
  async 'batch-list'() {
    const page = await call('GET', '/payouts/batches?limit=50');
    const rows = pageRows(page);
    show('batch-list', table(rows, ['batch_id', 'status', 'item_count', 'total_amount', 'currency', 'created_at']));
    const first = rows[0];
    if (first) setField('batch-view', 'batch_id', text(first.batch_id));
  },
  async 'batch-view'(f) {
    await followBatch(f.batch_id, f.note);
  },
  async exchanges(f) {
    const query = new URLSearchParams({ ...pick(f, ['q', 'country']), limit: '50' });
    const page = await call('GET', `/platforms/exchanges?${query.toString()}`);
    const rows = pageRows(page);
    show('exchanges', el('p', {}, `${rows.length} exchanges`), table(rows, ['id', 'name', 'status', 'certified']));
  },
  async banks() {
    const dir = await call('GET', '/platforms/banks');
    if (!isObject(dir)) return show('banks', pre(dir));
    const primary = isObject(dir.primary) ? [dir.primary] : [];
    const additional = Array.isArray(dir.additional) ? dir.additional.filter(isObject) : [];
    show(
      'banks',
      el('p', {}, `${primary.length + additional.length} banks`),
      table([...primary, ...additional], ['code', 'name', 'routes', 'status']),
    );
  },
  async 'p2p-ad'(f) {
    const body: JsonObject = {
      ...pick(f, ['side', 'asset', 'fiat', 'price', 'total_amount', 'min_order', 'max_order', 'terms']),
      price_type: 'fixed',
      payment_methods: commaList(f.payment_methods),
    };
    const ad = await call('POST', '/p2p/ads', { body, idempotent: true });
    show('p2p-ad', ok('Ad posted: ', el('code', { class: 'ad-id' }, member(ad, 'ad_id')), isObject(ad) ? ` (${text(ad.status)})` : ''));
  },
  async appeal(f) {
    const appeal = await call('POST', '/appeals', { body: pick(f, ['order_id', 'reason', 'description']) });
    show(
      'appeal',
      ok(
        'Appeal opened: ',
        el('code', { class: 'appeal-id' }, member(appeal, 'appeal_id')),
        ' ',
        el('span', { class: 'status' }, member(appeal, 'status')),
      ),
    );
  },
  async 'blocklist-add'(f) {
    const entry = await call('POST', '/compliance/blocklist', { body: pick(f, ['type', 'value', 'reason']) });
    show('blocklist-add', ok(`Listed ${isObject(entry) ? `${text(entry.type)} ${text(entry.value)}` : ''}`));
  },
  async 'blocklist-list'(f) {
    const query = new URLSearchParams({ ...pick(f, ['q']), limit: '50' });
    const page = await call('GET', `/compliance/blocklist?${query.toString()}`);
    const rows = pageRows(page);
    show('blocklist-list', table(rows, ['type', 'value', 'reason', 'source', 'active']));
  },
  async 'reviews-list'(f) {
    const query = new URLSearchParams({ ...pick(f, ['status']), limit: '50' });
    const page = await call('GET', `/compliance/reviews?${query.toString()}`);
    const rows = pageRows(page);
    const flat = rows.map((r): JsonObject => {
      const entry = isObject(r.entry) ? r.entry : {};
      return {
        review_id: r.review_id,
        screened: r.screened_value,
        listed: entry.value,
        list: entry.source,
        why: r.review_reason,
        order: r.order_id,
        status: r.status,
      };
    });
    show('reviews-list', table(flat, ['review_id', 'screened', 'listed', 'list', 'why', 'order', 'status']));
    const first = flat[0];
    if (first) setField('review-decide', 'review_id', text(first.review_id));
  },
  async 'review-decide'(f) {
    const review = await call('POST', `/compliance/reviews/${encodeURIComponent(f.review_id)}/decision`, {
      body: pick(f, ['decision', 'note']),
    });
    show(
      'review-decide',
      ok('Review ', el('code', {}, member(review, 'review_id')), ' ', el('span', { class: 'status' }, member(review, 'status'))),
    );
  },
  async 'breaks-list'(f) {
    const query = new URLSearchParams({ ...pick(f, ['status', 'rail']), limit: '50' });
    const page = await call('GET', `/compliance/reconciliation/breaks?${query.toString()}`);
    const rows = pageRows(page);
    show(
      'breaks-list',
      el('p', {}, `${rows.length} breaks`),
      table(rows, [
        'break_id',
        'rail',
        'method',
        'kind',
        'direction',
        'reference',
        'currency',
        'rail_amount',
        'ledger_amount',
        'day',
        'status',
      ]),
    );
    const first = rows.find((r) => r.status === 'open');
    if (first) setField('break-resolve', 'break_id', text(first.break_id));
  },
  async 'break-resolve'(f) {
    const answer = await call('POST', `/compliance/reconciliation/breaks/${encodeURIComponent(f.break_id)}/resolve`, {
      body: pick(f, ['note']),
    });
    if (isObject(answer) && typeof answer.request_id === 'string') {
      show('break-resolve', ok('Four-eyes request ', el('code', {}, answer.request_id), ' waits for a second staff member.'));
      return;
    }
    show(
      'break-resolve',
      ok('Break ', el('code', {}, member(answer, 'break_id')), ' ', el('span', { class: 'status' }, member(answer, 'status'))),
    );
  },
  async 'unresolved-list'() {
    const page = await call('GET', '/operations/unresolved-payouts?limit=50');
    const rows = pageRows(page);
    show('unresolved-list', table(rows, ['order_id', 'rail', 'reference', 'submission', 'amount', 'currency', 'sent_at']));
    const first = rows[0];
    if (first) setField('unresolved-resolve', 'order_id', text(first.order_id));
  },
  async 'unresolved-resolve'(f) {
    const request = await call('POST', `/operations/unresolved-payouts/${encodeURIComponent(f.order_id)}/resolve`, {
      body: pick(f, ['outcome', 'evidence', 'note']),
    });
    const requestId = member(request, 'request_id');
    show(
      'unresolved-resolve',
      ok(
        'Four-eyes request ',
        el('code', { class: 'request-id' }, requestId),
        ' ',
        el('span', { class: 'status' }, member(request, 'status')),
      ),
    );
    setField('approval-decide', 'request_id', requestId);
  },
  async 'approvals-list'() {
    const page = await call('GET', '/compliance/approvals?status=pending&limit=50');
    const rows = pageRows(page).map((r): JsonObject => ({
      ...r,
      asks: isObject(r.payload) ? Object.values(r.payload).map(text).join(' · ') : '',
    }));
    show('approvals-list', table(rows, ['request_id', 'kind', 'subject_id', 'amount', 'currency', 'asks', 'requested_by']));
    // A bulk payout waiting for approval opens in the Bulk payouts section.
    const batch = rows.find((r) => r.kind === 'approve_payout_batch');
    if (batch) setField('batch-view', 'batch_id', text(batch.subject_id));
  },
  async 'approval-decide'(f) {
    const decision = f.decision === 'reject' ? 'reject' : 'approve';
    const request = await call('POST', `/compliance/approvals/${encodeURIComponent(f.request_id)}/${decision}`, {
      body: pick(f, ['note']),
    });
    show(
      'approval-decide',
      ok('Request ', el('code', {}, member(request, 'request_id')), ' ', el('span', { class: 'status' }, member(request, 'status'))),
    );
  },
  async 'refunds-awaiting'() {
    const page = await call('GET', '/appeals?awaiting_second_approval=true&limit=50');
    const rows = pageRows(page).map((r): JsonObject => {
      const first = isObject(r.awaiting_second_approval) ? r.awaiting_second_approval : {};
      return {
        appeal_id: r.appeal_id,
        order_id: r.order_id,
        amount: first.amount ?? '',
        currency: first.currency ?? '',
        kes_equivalent: first.kes_equivalent ?? '',
        approved_by: first.approved_by ?? '',
      };
    });
    show('refunds-awaiting', table(rows, ['appeal_id', 'order_id', 'amount', 'currency', 'kes_equivalent', 'approved_by']));
  },
  async 'refund-second-approval'(f) {
    const appeal = await call('PUT', `/appeals/${encodeURIComponent(f.appeal_id)}/approve`, { body: pick(f, ['note']) });
    show(
      'refund-second-approval',
      ok('Appeal ', el('code', {}, member(appeal, 'appeal_id')), ' ', el('span', { class: 'status' }, member(appeal, 'status'))),
    );
  },
  async 'cases-list'() {
    const page = await call('GET', '/compliance/cases?status=open&limit=50');
    const rows = pageRows(page).map((r): JsonObject => {
      const closure = isObject(r.closure) ? r.closure : {};
      return { ...r, closure_waiting: closure.outcome ? `${text(closure.outcome)} by ${text(closure.requested_by)}` : '' };
    });
    show('cases-list', table(rows, ['case_id', 'customer_id', 'alert_count', 'last_alert_at', 'assignee_id', 'closure_waiting']));
    const first = rows[0];
    if (first) setField('case-close', 'case_id', text(first.case_id));
  },
  async 'case-close'(f) {
    const closed = await call('POST', `/compliance/cases/${encodeURIComponent(f.case_id)}/close`, { body: pick(f, ['outcome', 'note']) });
    const reportId = isObject(closed) && typeof closed.report_id === 'string' ? closed.report_id : null;
    const waiting = isObject(closed) && closed.status === 'open';
    show(
      'case-close',
      ok(
        'Case ',
        el('code', {}, member(closed, 'case_id')),
        ' ',
        el('span', { class: 'status' }, waiting ? 'waiting for a second staff member' : member(closed, 'status')),
        ...(reportId ? [' — STR ', el('code', { class: 'report-id' }, reportId)] : []),
      ),
    );
  },
  async report(f) {
    const query = new URLSearchParams({ from: f.from, to: f.to }).toString();
    // The report is computed by a workflow: 503 means "still being computed, ask again".
    for (let attempt = 0; ; attempt += 1) {
      try {
        const report = await call('GET', `/compliance/report?${query}`);
        show('report', ok('Report ', el('code', {}, member(report, 'workflow_id'))), pre(report));
        return;
      } catch (err) {
        if (!(err instanceof ApiError) || err.problem.status !== 503 || attempt >= 30) throw err;
        show('report', el('p', { role: 'status' }, 'Computing the report…'));
        await sleep(1000);
      }
    }
  },
};

function wire(): void {
  for (const form of document.querySelectorAll<HTMLFormElement>('form[data-action]')) {
    const name = form.dataset.action ?? '';
    const action = actions[name];
    if (!action) continue;
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const button = form.querySelector<HTMLButtonElement>('button[type="submit"]');
      if (button) button.disabled = true;
      show(name, el('p', { role: 'status' }, 'Working…'));
      action(fields(form))
        .catch((err: unknown) => showError(name, err))
        .finally(() => {
          if (button) button.disabled = false;
        });
    });
  }
  document.getElementById('logout')?.addEventListener('click', () => setToken(null));
  const today = new Date();
  const tomorrow = new Date(today.getTime() + 86_400_000);
  setField('report', 'from', today.toISOString().slice(0, 10));
  setField('report', 'to', tomorrow.toISOString().slice(0, 10));
  void renderSession();
}

wire();
