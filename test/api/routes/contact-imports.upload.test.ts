// The upload of an import over a real socket: chunked storage, the size cap, a slow upload past the API's request deadline, a stalled or cut-off upload, the
// bulk rate bucket, and the cap of imports in progress per tenant.
import { request, type ClientRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { buildTestApp, createKey, registerTenant } from '../../helpers/app.js';
import { contactByEmail, runToEnd, uploadImport } from '../../helpers/imports.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const env = {
  MAILPATH_CONFIG__LIMITS__IMPORTS__CHUNK_BYTES: '1024',
  MAILPATH_CONFIG__LIMITS__IMPORTS__MAX_FILE_BYTES: '20000',
  MAILPATH_CONFIG__LIMITS__IMPORTS__UPLOAD_IDLE_TIMEOUT_MS: '1500',
  // The API's own deadline is short: an import upload is exempt from it.
  MAILPATH_CONFIG__LIMITS__REQUEST__TIMEOUT_MS: '1000',
  MAILPATH_CONFIG__LIMITS__REQUEST__HEADERS_TIMEOUT_MS: '500',
  // No import worker runs here: the uploads stay queued, and the bucket test needs more than the tenant's default cap.
  MAILPATH_CONFIG__LIMITS__IMPORTS__PER_TENANT_IN_PROGRESS: '100',
};

interface Answer {
  status: number;
  body: any;
}

/** A POST whose body is written piece by piece by `write`; resolves with the answer, or undefined if the connection closed without one. */
function slowPost(port: number, token: string, length: number, write: (req: ClientRequest) => Promise<void>): Promise<Answer | undefined> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/api/v1/contacts/imports',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'text/csv', 'content-length': length },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text || 'null') }));
        res.on('error', () => resolve(undefined));
      },
    );
    req.on('error', () => resolve(undefined));
    void write(req);
  });
}

t.test('import uploads', async (t) => {
  const { app, ctx, sql } = await buildTestApp(t, { env });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as AddressInfo).port;
  const owner = await registerTenant(app);

  const importRow = async (id: string) => (await sql`select status, error, bytes::int, chunks from contact_imports where id = ${id}`)[0]!;
  const latest = async () =>
    (await sql`select id, status, error, bytes::int as bytes from contact_imports where tenant_id = ${owner.tenantId} order by created_at desc limit 1`)[0]!;
  const chunkCount = async (id: string) => (await sql`select count(*)::int as n from contact_import_chunks where import_id = ${id}`)[0]!.n;

  await t.test('the file is stored in chunks, a character split across two of them intact', async (t) => {
    let file = 'email,first_name\n';
    for (let i = 0; file.length < 5000; i++) file += `chunk${i}@example.com,Zoë ${'é'.repeat(i % 7)}\n`;
    const up = await uploadImport(app, owner.token, file);
    t.equal(up.status, 202);
    const row = await importRow(up.body.data.id);
    t.match(row, { status: 'queued', bytes: Buffer.byteLength(file), chunks: Math.ceil(Buffer.byteLength(file) / 1024) });
    await runToEnd(ctx, up.body.data.id);
    const done = await sql`select status, invalid::int, inserted::int from contact_imports where id = ${up.body.data.id}`;
    t.match(done[0], { status: 'completed', invalid: 0 });
    t.equal((await contactByEmail(sql, owner.tenantId, 'chunk6@example.com')).first_name, `Zoë ${'é'.repeat(6)}`);
    t.equal(await chunkCount(up.body.data.id), 0, 'a completed import keeps no chunks');
  });

  await t.test('a file over imports.max_file_bytes is 413 and leaves a failed import without chunks', async (t) => {
    const up = await uploadImport(app, owner.token, `email\n${'big@example.com\n'.repeat(2000)}`);
    t.equal(up.status, 413);
    t.equal(up.body.error, 'payload_too_large');
    const row = await latest();
    t.match(row, { status: 'failed', error: /larger than 20000 bytes/ });
    t.equal(await chunkCount(row.id), 0);
  });

  await t.test('a slow upload outlives the API request deadline', async (t) => {
    const body = 'email\nslow1@example.com\nslow2@example.com\n';
    const answer = await slowPost(port, owner.token, body.length, async (req) => {
      for (let i = 0; i < body.length; i += 10) {
        req.write(body.slice(i, i + 10));
        await sleep(400);
      }
      req.end();
    });
    t.equal(answer?.status, 202, 'answered although the body took longer than request.timeout_ms');
    t.equal(answer?.body.data.status, 'queued');
  });

  await t.test('a stalled upload is answered 408 and its import failed', async (t) => {
    const answer = await slowPost(port, owner.token, 1000, async (req) => {
      req.write('email\nstall@example.com\n');
      // Never finished: the idle deadline (1.5 s) ends it.
    });
    t.equal(answer?.status, 408);
    const row = await latest();
    t.match(row, { status: 'failed', error: /stalled/ });
    t.equal(await chunkCount(row.id), 0);
  });

  await t.test('a client that goes away mid-upload leaves a failed import, never a queued one', async (t) => {
    let sent!: ClientRequest;
    const answer = slowPost(port, owner.token, 10000, async (req) => {
      sent = req;
      req.write(`email\n${'cut@example.com\n'.repeat(200)}`);
    });
    await sleep(300);
    sent.destroy();
    t.equal(await answer, undefined);
    let row = await latest();
    for (let i = 0; i < 50 && row.status === 'uploading'; i++) {
      await sleep(100);
      row = await latest();
    }
    t.match(row, { status: 'failed', error: /interrupted/ });
    t.equal(await chunkCount(row.id), 0);
  });

  await t.test('the bulk bucket: 20 imports a minute per key, the 21st is 429', async (t) => {
    const key = await createKey(app, owner);
    for (let i = 0; i < 20; i++) {
      const res = await uploadImport(app, key.key, 'email\n');
      t.equal(res.status, 202, `import ${i + 1}`);
      if (i === 0) t.equal(res.headers['x-ratelimit-limit'], '20');
    }
    const over = await uploadImport(app, key.key, 'email\n');
    t.equal(over.status, 429);
    t.equal(over.body.error, 'rate_limited');
    t.ok(over.headers['retry-after']);
    const other = await createKey(app, owner);
    t.equal((await uploadImport(app, other.key, 'email\n')).status, 202, 'another key has its own bucket');
  });
});

t.test("a tenant's imports in progress are capped: the next upload is 429 before a byte is read, others' are not", async (t) => {
  const { app, ctx, sql } = await buildTestApp(t);
  const a = await registerTenant(app);
  const b = await registerTenant(app);
  const first = await uploadImport(app, a.token, 'email\nfirst@example.com\n');
  const second = await uploadImport(app, a.token, 'email\nsecond@example.com\n');
  t.same([first.status, second.status], [202, 202], 'two imports in progress (queued: no worker runs here)');
  const imports = async () => (await sql`select count(*)::int as n from contact_imports where tenant_id = ${a.tenantId}`)[0]!.n;
  const third = await uploadImport(app, a.token, 'email\nthird@example.com\n');
  t.equal(third.status, 429);
  t.match(third.body, { error: 'rate_limited', message: /^this account already has 2 imports in progress \(uploading, queued or running\)/ });
  t.equal(third.headers['retry-after'], '30');
  t.equal(await imports(), 2, 'the refused upload left no import behind');
  t.equal((await uploadImport(app, b.token, 'email\nother@example.com\n')).status, 202, "another tenant's upload is not held up");

  await runToEnd(ctx, first.body.data.id);
  const after = await uploadImport(app, a.token, 'email\nthird@example.com\n');
  t.equal(after.status, 202, 'a finished import frees its place');
  // Uploads at once are counted one after another: of three racing for the one free place, one gets it.
  await runToEnd(ctx, second.body.data.id);
  const raced = await Promise.all([0, 1, 2].map((i) => uploadImport(app, a.token, `email\nrace${i}@example.com\n`)));
  t.same(raced.map((r) => r.status).sort(), [202, 429, 429]);
});
