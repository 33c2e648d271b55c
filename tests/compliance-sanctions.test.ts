import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Queue, Worker } from 'bullmq';
import { expect } from 'chai';
import { loadConfig, type Config } from '../platform/config';
import { createRedis } from '../platform/redis';
import { IMPORT_SANCTIONS } from '../workers/queues';
import { runSanctionsImport, scheduleSanctionsImport, type SanctionsImportResult } from '../workers/sanctions-import';
import { api, blocklist, newUser, registerWithPassword, type TestUser } from './support/api';
import { rows } from './support/db';
import { RUN_ID } from './support/env';
import { ROOT } from './support/stack';

const SDN = path.join(ROOT, 'tests', 'fixtures', 'ofac-sdn-sample.csv');
const ALT = path.join(ROOT, 'tests', 'fixtures', 'ofac-alt-sample.csv');

interface EntryBody {
  entry_id: string;
  type: string;
  value: string;
  reason: string;
  source: string;
  created_by: string | null;
  active: boolean;
}

/** What the fixture lists, normalised. */
const LISTED: [string, string][] = [
  ['name', 'barnabas idris okonkwo latham'],
  ['email', 'barnabas.ol@example.net'],
  ['crypto_address', 'bc1qfixture0sdn0sample0address000000000'],
  ['national_id', '29918374'],
  ['national_id', 'B7730021'],
  ['phone', '+254733900117'],
  ['name', 'zephyrine maritime trading'],
  ['email', 'ops@zephyrine-maritime.example'],
  ['name', 'karoline star'],
  ['name', 'marisol vasquez ortega'],
  ['national_id', 'P00492811'],
  ['name', 'barney latham'],
  ['name', 'zephyrine shipping'],
];

const UN = path.join(ROOT, 'tests', 'fixtures', 'un-consolidated-sample.xml');
const EU = path.join(ROOT, 'tests', 'fixtures', 'eu-sanctions-sample.xml');

const configWith = (sources: string, more: Record<string, string> = {}): Config =>
  loadConfig({ ...process.env, SANCTIONS_LIST_PATH_OR_URL: sources, ...more });

async function ofacEntries(staff: TestUser): Promise<EntryBody[]> {
  const res = await api().get('/api/v1/compliance/blocklist').set(staff.auth).query({ source: 'ofac', limit: 100 });
  expect(res.status).to.equal(200);
  return (res.body as { data: EntryBody[] }).data;
}

const register = (email: string, fullName: string) => registerWithPassword({ email, full_name: fullName });

/** Run the import the way the jobs process does: a job scheduler upserted on a queue, a BullMQ worker processing it. */
async function importThroughQueue(cfg: Config): Promise<SanctionsImportResult> {
  const connection = createRedis({ forWorker: true });
  const name = `sanctions-test-${RUN_ID}`;
  const queue = new Queue(name, { connection, prefix: cfg.queuePrefix });
  let worker: Worker | undefined;
  try {
    const done = new Promise<SanctionsImportResult>((resolve, reject) => {
      worker = new Worker(
        name,
        async (job) => {
          if (job.name !== IMPORT_SANCTIONS) throw new Error(`unexpected job ${job.name}`);
          return runSanctionsImport(cfg);
        },
        { connection, prefix: cfg.queuePrefix },
      );
      worker.on('completed', (_job, result) => resolve(result as SanctionsImportResult));
      worker.on('failed', (_job, err) => reject(err));
    });
    expect(await scheduleSanctionsImport(queue, cfg)).to.equal(true);
    return await done;
  } finally {
    await queue.removeJobScheduler(IMPORT_SANCTIONS);
    await worker?.close();
    await queue.obliterate({ force: true });
    await queue.close();
    connection.disconnect();
  }
}

describe('compliance sanctions import', () => {
  let staff: TestUser;
  let first: SanctionsImportResult;
  let tmp: string;

  before(async function () {
    this.timeout(60_000);
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-sanctions-'));
    staff = await newUser({ roles: ['user', 'compliance'] });
    // A manual entry for a value the list also carries: the import must leave it alone.
    await blocklist(staff, { type: 'email', value: 'OPS@zephyrine-maritime.example', reason: 'reported by the bank' });
    first = await importThroughQueue(configWith(`${SDN},${ALT}`));
  });

  after(() => {
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  describe('when the jobs process imports the OFAC SDN fixture', () => {
    it('then every name, alias and identifier in it is on the blocklist with source ofac', async () => {
      const counts = { listed: 13, added: 12, updated: 0, retired: 0, skipped: 0 };
      expect(first).to.deep.equal({ ...counts, lists: { ofac: counts } });
      const entries = await ofacEntries(staff);
      const expected = LISTED.filter(([type, value]) => !(type === 'email' && value.startsWith('ops@')));
      expect(entries.map((e) => [e.type, e.value]).sort()).to.deep.equal([...expected].sort());
      for (const entry of entries) {
        expect(entry).to.include({ source: 'ofac', created_by: null, active: true });
        expect(entry.reason).to.match(/^OFAC SDN /);
      }
    });

    it('then the manual entry for the same value keeps its source and reason', async () => {
      const res = await api().get('/api/v1/compliance/blocklist').set(staff.auth).query({ q: 'ops@zephyrine' });
      expect((res.body as { data: EntryBody[] }).data.map((e) => [e.source, e.reason])).to.deep.equal([['manual', 'reported by the bank']]);
    });

    it('then screening uses the imported entries at once', async () => {
      const byEmail = await register('Barnabas.OL@example.net', 'Someone Else');
      expect(byEmail.status).to.equal(422);
      expect((byEmail.body as { code: string }).code).to.equal('blocked_by_compliance');
      const byName = await register(`mv-${RUN_ID}@example.com`, 'Marisol Vasquez Ortega');
      expect(byName.status).to.equal(422);
    });

    it('then importing the same list again changes nothing', async () => {
      const counts = { listed: 13, added: 0, updated: 0, retired: 0, skipped: 0 };
      expect(await runSanctionsImport(configWith(`${SDN},${ALT}`))).to.deep.equal({ ...counts, lists: { ofac: counts } });
    });
  });

  describe('when a later list no longer carries an entry', () => {
    it('then its entries expire (kept, no longer matching), and come back when it is listed again from a URL', async () => {
      const reduced = path.join(tmp, 'sdn-reduced.csv');
      fs.writeFileSync(
        reduced,
        fs
          .readFileSync(SDN, 'utf8')
          .split('\r\n')
          .filter((line) => !line.startsWith('9004,'))
          .join('\r\n'),
      );
      expect(await runSanctionsImport(configWith(`${reduced},${ALT}`))).to.deep.include({ listed: 11, added: 0, retired: 2 });
      const retired = (await ofacEntries(staff)).filter((e) => !e.active).map((e) => e.value);
      expect(retired.sort()).to.deep.equal(['P00492811', 'marisol vasquez ortega']);
      expect((await register(`mv2-${RUN_ID}@example.com`, 'Marisol Vasquez Ortega')).status).to.equal(201);

      const server = http.createServer((req, res) => {
        const file = req.url === '/sdn.csv' ? SDN : req.url === '/alt.csv' ? ALT : undefined;
        if (!file) {
          res.writeHead(404).end();
          return;
        }
        res.writeHead(200, { 'content-type': 'text/csv' }).end(fs.readFileSync(file));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      try {
        expect(await runSanctionsImport(configWith(`${base}/sdn.csv,${base}/alt.csv`))).to.deep.include({
          listed: 13,
          added: 0,
          updated: 2,
          retired: 0,
        });
        expect((await ofacEntries(staff)).every((e) => e.active)).to.equal(true);
        let failure: unknown;
        try {
          await runSanctionsImport(configWith(`${base}/missing.csv`));
        } catch (err) {
          failure = err;
        }
        expect(String(failure)).to.match(/answered 404/);
      } finally {
        server.close();
      }
    });
  });

  describe('when the list is empty or unreadable', () => {
    it('then the import fails and the blocklist is left as it was', async () => {
      const empty = path.join(tmp, 'empty.csv');
      fs.writeFileSync(empty, 'not,an,sdn,file\n');
      let failure: unknown;
      try {
        await runSanctionsImport(configWith(empty));
      } catch (err) {
        failure = err;
      }
      expect(String(failure)).to.match(/no sanctions entries found/);
      expect((await ofacEntries(staff)).filter((e) => e.active)).to.have.length(12);
      const [{ count }] = await rows<{ count: string }>(
        `SELECT count(*) AS count FROM blocklist_entries WHERE source = 'ofac' AND expires_at IS NOT NULL AND expires_at <= now()`,
      );
      expect(count).to.equal('0');
    });

    it('then no source configured means nothing to do, and no scheduler', async () => {
      const cfg = loadConfig({ ...process.env, SANCTIONS_LIST_PATH_OR_URL: '' });
      expect(await runSanctionsImport(cfg)).to.equal(null);
      const connection = createRedis();
      const queue = new Queue(`sanctions-none-${RUN_ID}`, { connection, prefix: cfg.queuePrefix });
      try {
        expect(await scheduleSanctionsImport(queue, cfg)).to.equal(false);
        expect(await queue.getJobScheduler(IMPORT_SANCTIONS)).to.equal(undefined);
      } finally {
        await queue.obliterate({ force: true });
        await queue.close();
        connection.disconnect();
      }
    });
  });

  describe('when the UN consolidated list and the EU list are imported with OFAC', () => {
    let result: SanctionsImportResult;
    before(async function () {
      this.timeout(60_000);
      result = (await runSanctionsImport(
        configWith(`${SDN},${ALT}`, { UN_SANCTIONS_LIST_PATH_OR_URL: UN, EU_SANCTIONS_LIST_PATH_OR_URL: EU }),
      ))!;
    });

    it('then each list is imported under its own source, with the names in their original scripts', async () => {
      expect(result.lists.un).to.include({ listed: 12, skipped: 0 });
      expect(result.lists.eu).to.include({ listed: 7, skipped: 0 });
      const listed = await rows<{ source: string; value: string; external_ref: string }>(
        `SELECT source, value, external_ref FROM blocklist_entries WHERE source IN ('un', 'eu') AND type = 'name' AND expires_at IS NULL ORDER BY value`,
      );
      const values = listed.map((r) => `${r.source} ${r.external_ref} ${r.value}`);
      expect(values).to.include.members([
        'un un:7100001 виктор петрович иванов',
        'un un:7100001 viktor petrovich ivanov',
        'un un:7100002 حمزة بن طارق الزهراني',
        'un un:7100003 赵国强',
        'eu eu:880001 евгений викторович пригожин',
        'eu eu:880002 ماهر الخطيب',
      ]);
    });

    it('then a hit names its list and its entry, even when the name is written in another script', async () => {
      // Listed by the EU in Latin and Arabic letters; registered in Cyrillic-free Latin, and in Arabic script.
      const latin = await register(`maher-${RUN_ID}@example.com`, 'Maher Al Khatib');
      expect(latin.status).to.equal(422);
      // Listed by the UN in Latin letters and in Chinese; registered in Latin letters with the surname last.
      const chinese = await register(`zhao-${RUN_ID}@example.com`, 'Guoqiang Zhao');
      expect(chinese.status).to.equal(422);
      const hits = await rows<{ screened_value: string; source: string; external_ref: string }>(
        `SELECT h.screened_value, e.source, e.external_ref FROM screening_hits h JOIN blocklist_entries e ON e.id = h.entry_id
          WHERE h.screened_value IN ('maher al khatib', 'guoqiang zhao') ORDER BY h.screened_value`,
      );
      expect(hits.map((h) => [h.screened_value, h.source, h.external_ref])).to.deep.include.members([
        ['guoqiang zhao', 'un', 'un:7100003'],
        ['maher al khatib', 'eu', 'eu:880002'],
      ]);
    });

    it('then importing them again changes nothing, and an unreadable UN file keeps every list as it was', async () => {
      const again = await runSanctionsImport(
        configWith(`${SDN},${ALT}`, { UN_SANCTIONS_LIST_PATH_OR_URL: UN, EU_SANCTIONS_LIST_PATH_OR_URL: EU }),
      );
      expect(again).to.include({ added: 0, updated: 0, retired: 0 });
      const broken = path.join(tmp, 'broken.xml');
      fs.writeFileSync(broken, '<html>maintenance</html>');
      let failure: unknown;
      try {
        await runSanctionsImport(configWith(`${SDN},${ALT}`, { UN_SANCTIONS_LIST_PATH_OR_URL: broken, EU_SANCTIONS_LIST_PATH_OR_URL: EU }));
      } catch (err) {
        failure = err;
      }
      expect(String(failure)).to.match(/not a UN consolidated list/);
      const [{ count }] = await rows<{ count: string }>(
        `SELECT count(*) AS count FROM blocklist_entries WHERE source = 'un' AND (expires_at IS NULL OR expires_at > now())`,
      );
      expect(Number(count)).to.equal(12);
    });

    it('then a name one list drops and another still lists stays screened, under the other list', async () => {
      // The EU list without Prigozhin, and a UN list that names him: he passes to the UN in the same import.
      const euWithout = path.join(tmp, 'eu-without.xml');
      const euText = fs.readFileSync(EU, 'utf8');
      fs.writeFileSync(euWithout, euText.replace(/<sanctionEntity [^>]*logicalId="880001"[\s\S]*?<\/sanctionEntity>/, ''));
      const unWith = path.join(tmp, 'un-with.xml');
      fs.writeFileSync(
        unWith,
        fs
          .readFileSync(UN, 'utf8')
          .replace(
            '<ALIAS_NAME>Viktor Ivanoff</ALIAS_NAME>',
            '<ALIAS_NAME>Viktor Ivanoff</ALIAS_NAME></INDIVIDUAL_ALIAS><INDIVIDUAL_ALIAS><ALIAS_NAME>Yevgeniy Viktorovich Prigozhin</ALIAS_NAME>',
          ),
      );
      await runSanctionsImport(
        configWith(`${SDN},${ALT}`, { UN_SANCTIONS_LIST_PATH_OR_URL: unWith, EU_SANCTIONS_LIST_PATH_OR_URL: euWithout }),
      );
      const [entry] = await rows<{ source: string; active: boolean }>(
        `SELECT source, (expires_at IS NULL OR expires_at > now()) AS active FROM blocklist_entries
          WHERE type = 'name' AND value = 'yevgeniy viktorovich prigozhin'`,
      );
      expect(entry).to.deep.equal({ source: 'un', active: true });
      const [cyrillic] = await rows<{ active: boolean }>(
        `SELECT (expires_at IS NULL OR expires_at > now()) AS active FROM blocklist_entries WHERE value = 'евгений викторович пригожин'`,
      );
      expect(cyrillic.active).to.equal(false);
      // Put the lists back as the fixtures have them.
      await runSanctionsImport(configWith(`${SDN},${ALT}`, { UN_SANCTIONS_LIST_PATH_OR_URL: UN, EU_SANCTIONS_LIST_PATH_OR_URL: EU }));
    });
  });
});
