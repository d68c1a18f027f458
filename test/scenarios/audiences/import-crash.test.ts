// Crash safety of imports: SIGKILL a real `mailpath start` mid-import; another process resumes the job after the committed rows and the final counts are exact.
import { randomBytes } from 'node:crypto';
import { request } from 'node:https';
import postgres from 'postgres';
import t from 'tap';
import { createTestDatabase } from '../../helpers/db.js';
import { https, startMailpathProcess, type MailpathProcess } from '../../helpers/mailpath-process.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ROWS = 20_000;

const db = await createTestDatabase();
const sql = postgres(db.url, { max: 2, onnotice: () => {} });
t.teardown(async () => {
  await sql.end({ timeout: 5 });
  await db.drop();
});

const env = {
  DATABASE_URL: db.url,
  MAILPATH_ROLES: 'api,outbound,scheduler',
  MAILPATH_MASTER_KEY: randomBytes(32).toString('hex'),
  MAILPATH_JWT_SECRET: randomBytes(32).toString('hex'),
  MAILPATH_CONFIG__LIMITS__IMPORTS__BATCH_SIZE: '500',
  // Short slices: the job hands over to continuations in the real process too.
  MAILPATH_CONFIG__LIMITS__IMPORTS__SLICE_SECONDS: '2',
  // A dead process's import job is taken over within seconds rather than minutes.
  MAILPATH_CONFIG__LIMITS__IMPORTS__JOB_EXPIRE_SECONDS: '3',
  MAILPATH_CONFIG__DELIVERY__WORKERS__QUEUE_MAINTENANCE_SECONDS: '1',
};

const processes: MailpathProcess[] = [];
t.teardown(async () => {
  for (const p of processes) await p.stop();
});

/** The file, and what importing it must come to: every 97th row invalid, every 50th a repeat of an earlier address. */
function makeFile(): { file: string; inserted: number; updated: number; invalid: number } {
  const lines = ['email,first_name,plan,seats'];
  const seen = new Set<string>();
  let inserted = 0;
  let updated = 0;
  let invalid = 0;
  for (let i = 1; i <= ROWS; i++) {
    if (i % 97 === 0) {
      lines.push(`broken-${i},Bad,free,1`);
      invalid++;
      continue;
    }
    const n = i % 50 === 0 ? i - 25 - ((i - 25) % 97 === 0 ? 1 : 0) : i;
    const email = `person${n}@example.com`;
    lines.push(`${email},Name ${i},${i % 2 ? 'pro' : 'free'},${i % 7}`);
    if (seen.has(email)) updated++;
    else {
      seen.add(email);
      inserted++;
    }
  }
  return { file: `${lines.join('\n')}\n`, inserted, updated, invalid };
}

function uploadCsv(port: number, token: string, query: string, body: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: `/api/v1/contacts/imports${query}`,
        rejectUnauthorized: false,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'text/csv', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const progress = async (id: string) =>
  (
    await sql<{ status: string; rows_done: number; rows_total: number | null; inserted: number; updated: number; skipped: number; invalid: number }[]>`
    select status, rows_done::int, rows_total::int, inserted::int, updated::int, skipped::int, invalid::int from contact_imports where id = ${id}`
  )[0]!;

t.test('an import killed mid-way resumes in another process and its counts are exact', async (t) => {
  const first = await startMailpathProcess(env);
  processes.push(first);
  const registered = await https(first.httpsPort, 'POST', '/auth/register', {
    body: { tenant_name: 'Crash', tenant_slug: 'crash-import', email: 'owner@crash.test', password: 'Correct-horse-42' },
  });
  t.equal(registered.status, 201, first.output());
  const tenantId = registered.body.data.tenant_id as string;
  const token = registered.body.data.token as string;
  await sql`insert into contact_custom_fields (tenant_id, key, label, type, options, created_at, updated_at)
            values (${tenantId}, 'plan', 'Plan', 'select', ${['free', 'pro']}, now(), now()), (${tenantId}, 'seats', 'Seats', 'number', null, now(), now())`;
  const [list] = await sql<
    { id: string }[]
  >`insert into lists (tenant_id, name, created_at, updated_at) values (${tenantId}, 'All', now(), now()) returning id`;
  const expected = makeFile();

  const up = await uploadCsv(first.httpsPort, token, `?list_id=${list!.id}`, expected.file);
  t.equal(up.status, 202, JSON.stringify(up.body));
  const id = up.body.data.id as string;

  // Killed once some batches are committed and before the end.
  let before = await progress(id);
  for (let i = 0; i < 600 && before.rows_done < 5_000; i++) {
    await sleep(25);
    before = await progress(id);
  }
  await first.kill();
  const atKill = await progress(id);
  t.equal(atKill.status, 'running', 'killed while running');
  t.ok(atKill.rows_done > 0 && atKill.rows_done < ROWS, `killed mid-import (${atKill.rows_done} of ${ROWS} rows committed)`);

  const second = await startMailpathProcess(env);
  processes.push(second);
  let after = await progress(id);
  for (let i = 0; i < 1200 && after.status !== 'completed' && after.status !== 'failed'; i++) {
    await sleep(100);
    after = await progress(id);
  }
  t.same(
    after,
    { status: 'completed', rows_done: ROWS, rows_total: ROWS, inserted: expected.inserted, updated: expected.updated, skipped: 0, invalid: expected.invalid },
    second.output(),
  );
  const [contacts] = await sql<{ n: number }[]>`select count(*)::int as n from contacts where tenant_id = ${tenantId}`;
  t.equal(contacts!.n, expected.inserted, 'one contact per distinct valid address');
  const [errors] = await sql<
    { n: number; lines: number }[]
  >`select count(*)::int as n, count(distinct line)::int as lines from contact_import_errors where import_id = ${id}`;
  t.same(errors, { n: expected.invalid, lines: expected.invalid }, 'one error row per invalid line');
  const [members] = await sql<{ n: number; count: number }[]>`
    select (select count(*)::int from list_members where list_id = ${list!.id}) as n, (select member_count::int from lists where id = ${list!.id}) as count`;
  t.same(members, { n: expected.inserted, count: expected.inserted }, 'every contact in the list once, the count exact');
  const [sample] = await sql<{ first_name: string; custom_fields: Record<string, unknown> }[]>`
    select first_name, custom_fields from contacts where tenant_id = ${tenantId} and email = 'person25@example.com'`;
  t.same(sample, { first_name: 'Name 50', custom_fields: { plan: 'free', seats: 1 } }, 'the later row of a repeated address won');
});
