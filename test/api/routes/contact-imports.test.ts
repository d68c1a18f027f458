// POST /contacts/imports and its reads: CSV and NDJSON imports end to end (upload, job, progress, row errors), mapping, update vs skip, lists, and every
// malformed-file class.
import t from 'tap';
import { buildTestApp, call, createKey, registerTenant } from '../../helpers/app.js';
import { addCustomField, addList, contactByEmail, importFile, runToEnd, uploadImport } from '../../helpers/imports.js';

// Small batches and records, so a few rows cross batch boundaries and a modest line is over-long.
const env = {
  MAILPATH_CONFIG__LIMITS__IMPORTS__BATCH_SIZE: '4',
  MAILPATH_CONFIG__LIMITS__IMPORTS__MAX_RECORD_BYTES: '2048',
  // The bulk bucket (20 a minute) has its own test (contact-imports.upload.test.ts).
  MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__BULK: '100000',
};

t.test('contact imports', async (t) => {
  const { app, ctx, sql } = await buildTestApp(t, { env });
  const owner = await registerTenant(app);
  const tenant = owner.tenantId;
  await addCustomField(sql, tenant, { key: 'plan', type: 'select', options: ['free', 'pro'] });
  await addCustomField(sql, tenant, { key: 'seats', type: 'number' });
  await addCustomField(sql, tenant, { key: 'vip', type: 'boolean' });
  const run = (file: string | Buffer, options: Parameters<typeof importFile>[4] = {}) => importFile(app, ctx, owner.token, file, options);

  await t.test('a CSV file: reserved columns and custom fields coerced from text, invalid rows reported by line', async (t) => {
    const out = await run(
      'email,first_name,country,plan,seats,vip\n' +
        'Ann@Example.com,Ann,FR,pro,42,yes\n' +
        'not-an-address,Bob,US,free,1,no\n' +
        'carl@example.com,Carl,,free,many,no\n' +
        'dana@example.com,Dana,DE,,,\n' +
        'erin@example.com,' +
        'x'.repeat(201) +
        ',US,free,1,true\n',
    );
    t.match(out, { status: 'completed', rows_total: 5, rows_done: 5, inserted: 2, updated: 0, skipped: 0, invalid: 3, error: null });
    t.same(out.errors, [
      { line: 3, reason: 'email: must be one address of the form local@domain' },
      { line: 4, reason: 'custom_fields.seats: must be a finite number' },
      { line: 6, reason: 'first_name: must be at most 200 characters' },
    ]);
    const ann = await contactByEmail(sql, tenant, 'ann@example.com');
    t.match(ann, { first_name: 'Ann', country: 'FR', status: 'active' });
    t.same(ann.custom_fields, { plan: 'pro', seats: 42, vip: true });
    const dana = await contactByEmail(sql, tenant, 'dana@example.com');
    t.same(dana.custom_fields, {}, 'empty cells set nothing on a new contact');
  });

  await t.test('mapping: headers to columns and custom fields, null ignores a column; unmapped names map themselves', async (t) => {
    const out = await run('E-mail Address,Given Name,Plan,Notes,Last-Name\nmap1@example.com,Mia,pro,whatever,Smith\n', {
      query: { mapping: JSON.stringify({ 'E-mail Address': 'email', 'Given Name': 'first_name', Plan: 'custom_fields.plan', Notes: null }) },
    });
    t.match(out, { status: 'completed', inserted: 1, invalid: 0 });
    const c = await contactByEmail(sql, tenant, 'map1@example.com');
    t.match(c, { first_name: 'Mia', last_name: 'Smith' });
    t.same(c.custom_fields, { plan: 'pro' });
  });

  await t.test('columns that map nowhere fail the file; read-only reserved columns are ignored', async (t) => {
    const unknown = await run('email,favourite_colour\nx1@example.com,blue\n');
    t.equal(unknown.status, 'failed');
    t.match(unknown.error, /favourite_colour/);
    t.equal(unknown.rows_done, 0);
    t.notOk(await contactByEmail(sql, tenant, 'x1@example.com'), 'nothing imported');
    const readOnly = await run('id,email,created_at\n00000000-0000-0000-0000-000000000000,ro@example.com,2020-01-01\n');
    t.match(readOnly, { status: 'completed', inserted: 1 });
    const noEmail = await run('first_name,last_name\nAnn,Lee\n');
    t.equal(noEmail.status, 'failed');
    t.match(noEmail.error, /no column holds the email address/);
    const missingHeader = await run('email\nm@example.com\n', { query: { mapping: JSON.stringify({ Mail: 'email' }) } });
    t.match(missingHeader, { status: 'failed', error: /does not have: "Mail"/ });
    const bad = await uploadImport(app, owner.token, 'email\n', { query: { mapping: JSON.stringify({ Plan: 'custom_fields.nope' }) } });
    t.equal(bad.status, 422, 'a mapped custom field outside the catalog is refused before the upload');
    t.match(bad.body.message, /mapping/);
    const target = await uploadImport(app, owner.token, 'email\n', { query: { mapping: JSON.stringify({ Id: 'id' }) } });
    t.equal(target.status, 422, 'a read-only column is no target');
    const json = await uploadImport(app, owner.token, 'email\n', { query: { mapping: '{not json' } });
    t.equal(json.status, 422);
  });

  await t.test('update vs skip, and duplicates within the file applied in order', async (t) => {
    await run('email,first_name,last_name,seats\nup@example.com,Old,Keep,1\n');
    const updated = await run('email,first_name,seats\nup@example.com,New,\nup2@example.com,Two,2\n');
    t.match(updated, { status: 'completed', inserted: 1, updated: 1 });
    const up = await contactByEmail(sql, tenant, 'up@example.com');
    t.match(up, { first_name: 'New', last_name: 'Keep' }, 'a column the file does not have stays');
    t.same(up.custom_fields, {}, 'an empty cell removes the stored value');
    const skipped = await run('email,first_name\nup@example.com,Skipped\nup3@example.com,Three\n', { query: { on_existing: 'skip' } });
    t.match(skipped, { status: 'completed', inserted: 1, updated: 0, skipped: 1 });
    t.equal((await contactByEmail(sql, tenant, 'up@example.com')).first_name, 'New');

    // Rows 1 and 3 (same batch of 4) and row 6 (next batch) name the same address.
    const dupes =
      'email,first_name\ndup@example.com,First\na1@example.com,A\nDUP@example.com,Second\nb1@example.com,B\nc1@example.com,C\ndup@example.com,Third\n';
    const later = await run(dupes);
    t.match(later, { status: 'completed', rows_done: 6, inserted: 4, updated: 2, invalid: 0 });
    t.equal((await contactByEmail(sql, tenant, 'dup@example.com')).first_name, 'Third', 'the last row wins with update');
    const first = await run(
      dupes
        .replace(/dup@/g, 'dup2@')
        .replace(/DUP@/, 'DUP2@')
        .replace(/[abc]1@/g, (m) => m.replace('1', '2')),
      {
        query: { on_existing: 'skip' },
      },
    );
    t.match(first, { status: 'completed', inserted: 4, updated: 0, skipped: 2 });
    t.equal((await contactByEmail(sql, tenant, 'dup2@example.com')).first_name, 'First', 'the first row wins with skip');
  });

  await t.test('status: an import unsubscribes but never re-subscribes (such a row is reported invalid); deleted contacts are made anew', async (t) => {
    await run('email,status\nst@example.com,unsubscribed\n');
    const st = await contactByEmail(sql, tenant, 'st@example.com');
    t.equal(st.status, 'unsubscribed');
    t.ok(st.unsubscribed_at);
    const back = await run('email,status,first_name\nst@example.com,active,Still\nok@example.com,active,Fine\n');
    t.match(back, { inserted: 1, updated: 0, invalid: 1 }, 'the re-subscribing row is a failure, not applied');
    t.match(back.errors, [
      { line: 2, reason: `status: st@example.com is unsubscribed; an import never re-subscribes (POST /contacts/${st.id}/resubscribe with a reason does)` },
    ]);
    t.match(await contactByEmail(sql, tenant, 'st@example.com'), { status: 'unsubscribed', first_name: null });
    await run('email,first_name\nst@example.com,Still\n');
    t.match(await contactByEmail(sql, tenant, 'st@example.com'), { status: 'unsubscribed', first_name: 'Still' }, 'a row without status still updates it');
    const json = await run('{"email":"st@example.com","status":"active"}\n', { type: 'application/x-ndjson' });
    t.match(json, { invalid: 1, updated: 0 }, 'NDJSON alike');
    await sql`update contacts set status = 'deleted', first_name = 'Gone' where tenant_id = ${tenant} and email = 'st@example.com'`;
    const anew = await run('email\nst@example.com\n', { query: { on_existing: 'skip' } });
    t.match(anew, { inserted: 1, skipped: 0 }, 'made anew even with skip, counted as inserted');
    t.match(await contactByEmail(sql, tenant, 'st@example.com'), { status: 'active', first_name: null });
    const bad = await run('email,status\nst2@example.com,deleted\n');
    t.match(bad.errors, [{ line: 2, reason: 'status: must be active or unsubscribed' }]);
  });

  await t.test('a required custom field binds new contacts only', async (t) => {
    const other = await registerTenant(app);
    await addCustomField(sql, other.tenantId, { key: 'tier', type: 'text', required: true });
    const first = await importFile(app, ctx, other.token, 'email,tier\nreq@example.com,gold\nreq2@example.com,\n');
    t.match(first, { inserted: 1, invalid: 1 });
    t.same(first.errors, [{ line: 3, reason: 'custom_fields.tier: is required' }]);
    const again = await importFile(app, ctx, other.token, 'email,first_name\nreq@example.com,Known\nreq3@example.com,New\n');
    t.match(again, { updated: 1, invalid: 1 });
    t.same(again.errors, [{ line: 3, reason: 'custom_fields.tier: is required' }]);
  });

  await t.test('list_id adds every valid row to the list; a list of another tenant or none is 422', async (t) => {
    const listId = await addList(sql, tenant, 'Imported');
    const out = await run('email\nl1@example.com\nl2@example.com\nnope\nup@example.com\n', { query: { list_id: listId, on_existing: 'skip' } });
    t.match(out, { status: 'completed', list_id: listId, invalid: 1 });
    const [members] = await sql<{ n: number }[]>`select count(*)::int as n from list_members where list_id = ${listId}`;
    t.equal(members!.n, 3, 'skipped existing contacts are added too');
    const [list] = await sql`select member_count::int as c from lists where id = ${listId}`;
    t.equal(list!.c, 3);
    const other = await registerTenant(app);
    const foreignList = await addList(sql, other.tenantId, 'Theirs');
    const refused = await uploadImport(app, owner.token, 'email\nz@example.com\n', { query: { list_id: foreignList } });
    t.equal(refused.status, 422);
    t.match(refused.body, { error: 'validation_error', message: /list_id/ });
    const missing = await uploadImport(app, owner.token, 'email\n', { query: { list_id: '00000000-0000-4000-8000-000000000000' } });
    t.equal(missing.status, 422);
    const malformed = await uploadImport(app, owner.token, 'email\n', { query: { list_id: 'abc' } });
    t.equal(malformed.status, 422);
  });

  await t.test('malformed CSV: each class gives a per-row or a per-file error, never a silent partial import', async (t) => {
    const bom = await run('\ufeffemail,first_name\r\nbom1@example.com,A\nbom2@example.com,B\r\n\r\nbom3@example.com,C');
    t.match(bom, { status: 'completed', rows_total: 3, inserted: 3, invalid: 0 }, 'BOM, CRLF/LF mix and a missing final newline are accepted');

    const badUtf8 = Buffer.concat([
      Buffer.from('email,first_name\nu1@example.com,Ok\nu2@example.com,'),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('\nu3@example.com,Zoë\n'),
    ]);
    const utf = await run(badUtf8);
    t.match(utf, { status: 'completed', inserted: 2, invalid: 1 });
    t.same(utf.errors, [{ line: 3, reason: 'invalid UTF-8' }]);
    t.equal((await contactByEmail(sql, tenant, 'u3@example.com')).first_name, 'Zoë');

    const count = await run('email,first_name\nc1x@example.com,A,extra\nc2x@example.com\nc3x@example.com,C\n');
    t.match(count, { inserted: 1, invalid: 2 });
    t.same(count.errors, [
      { line: 2, reason: 'has 3 fields, the header has 2' },
      { line: 3, reason: 'has 1 field, the header has 2' },
    ]);

    const nul = await run('email,first_name\nn1@example.com,A\u0000B\nn2@example.com,ok\n');
    t.same(nul.errors, [{ line: 2, reason: 'contains a NUL character' }]);
    t.equal(nul.inserted, 1);

    const empty = await run('');
    t.match(empty, { status: 'failed', error: /the file is empty/, rows_done: 0 });
    const onlyBom = await run('\ufeff');
    t.match(onlyBom, { status: 'failed', error: /the file is empty/ });
    const headerOnly = await run('email,first_name\n');
    t.match(headerOnly, { status: 'completed', rows_total: 0, rows_done: 0, inserted: 0 });

    // Rows 2..6 fill a batch and a half; the quote opened on line 7 is never closed.
    const quote = await run(
      'email,first_name\nq1@example.com,A\nq2@example.com,B\nq3@example.com,C\nq4@example.com,D\nq5@example.com,E\nq6@example.com,"F\nq7@example.com,G\n',
    );
    t.match(quote, { status: 'failed', rows_done: 5, inserted: 5 });
    t.match(quote.error, /^line 7: a quoted field is never closed/);
    t.match(quote.error, /the 5 row\(s\) before it were processed/);
    t.notOk(await contactByEmail(sql, tenant, 'q7@example.com'));

    const stray = await run('email,first_name\nsq1@example.com,A\nsq2@example.com,5" screen\n');
    t.match(stray, { status: 'failed', rows_done: 1, error: /^line 3: a quote inside an unquoted field/ });

    const quotedOk = await run('email,first_name\nqq@example.com,"Lee, ""Al"""\nqq2@example.com,"two\nlines"\n');
    t.match(quotedOk, { status: 'completed', inserted: 1, invalid: 1 }, 'quoted fields with delimiters, doubled quotes and line breaks parse');
    t.equal((await contactByEmail(sql, tenant, 'qq@example.com')).first_name, 'Lee, "Al"');
    t.same(
      quotedOk.errors,
      [{ line: 3, reason: 'first_name: must be one line without control characters' }],
      'a record spanning lines is reported at its first line',
    );
  });

  await t.test('an over-long line fails the file at its line with bounded memory', async (t) => {
    const out = await run(`email,first_name\nlong1@example.com,A\nlong2@example.com,${'y'.repeat(5 * 1024 * 1024)}\nlong3@example.com,C\n`);
    t.match(out, { status: 'failed', rows_done: 1, inserted: 1 });
    t.match(out.error, /^line 3: the record is longer than the largest accepted/);
  });

  await t.test('delimiter: semicolons and tabs', async (t) => {
    const semi = await run('email;first_name\nsemi@example.com;Semi\n', { query: { delimiter: ';' } });
    t.match(semi, { status: 'completed', inserted: 1 });
    const tab = await run('email\tfirst_name\ntab@example.com\tTab\n', { query: { delimiter: 'tab' } });
    t.match(tab, { status: 'completed', inserted: 1 });
    t.equal((await contactByEmail(sql, tenant, 'tab@example.com')).first_name, 'Tab');
    const bad = await uploadImport(app, owner.token, 'email\n', { query: { delimiter: '""' } });
    t.equal(bad.status, 422);
  });

  await t.test('NDJSON: one object per line, keys as in the contact API', async (t) => {
    const file = [
      '{"email":"j1@example.com","first_name":"Jo","custom_fields":{"seats":3,"plan":"pro"}}',
      '',
      '{"email":"j2@example.com","postal_code":75001,"Plan":"free"}',
      '{not json',
      '["an","array"]',
      '{"email":"j3@example.com","favourite":"x"}',
      '{"first_name":"No address"}',
      '{"email":"j4@example.com","custom_fields":{"seats":"many"}}',
    ].join('\r\n');
    const out = await run(file, { type: 'application/x-ndjson' });
    t.match(out, { status: 'completed', format: 'ndjson', rows_total: 7, inserted: 2, invalid: 5 });
    t.same(out.errors, [
      { line: 4, reason: 'not valid JSON' },
      { line: 5, reason: 'must be a JSON object (one contact per line)' },
      { line: 6, reason: 'favourite: is neither a contact column nor a custom field' },
      { line: 7, reason: 'email: is required' },
      { line: 8, reason: 'custom_fields.seats: must be a finite number' },
    ]);
    t.same((await contactByEmail(sql, tenant, 'j1@example.com')).custom_fields, { seats: 3, plan: 'pro' });
    const j2 = await contactByEmail(sql, tenant, 'j2@example.com');
    t.equal(j2.postal_code, '75001');
    t.same(j2.custom_fields, { plan: 'free' });
    // A key absent from a line leaves the stored value; null clears it.
    const second = await run('{"email":"j1@example.com","last_name":"Doe"}\n{"email":"j2@example.com","postal_code":null}\n', { type: 'application/x-ndjson' });
    t.match(second, { updated: 2 });
    t.match(await contactByEmail(sql, tenant, 'j1@example.com'), { first_name: 'Jo', last_name: 'Doe' });
    t.equal((await contactByEmail(sql, tenant, 'j2@example.com')).postal_code, null);
    const empty = await run('\n\n', { type: 'application/x-ndjson' });
    t.match(empty, { status: 'failed', error: /the file is empty/ });
    const long = await run(`{"email":"big@example.com","first_name":"${'z'.repeat(4000)}"}\n{"email":"after@example.com"}\n`, { type: 'application/x-ndjson' });
    t.match(long, { status: 'completed', inserted: 1, invalid: 1 });
    t.match(long.errors, [{ line: 1, reason: /longer than 2048 bytes/ }]);
  });

  await t.test('content types: a JSON array is 415 naming NDJSON, other types 415, a foreign charset 415', async (t) => {
    const array = await uploadImport(app, owner.token, '[{"email":"a@example.com"}]', { type: 'application/json' });
    t.equal(array.status, 415);
    t.match(array.body, { error: 'unsupported_media_type', message: /NDJSON/ });
    const text = await uploadImport(app, owner.token, 'email\n', { type: 'text/plain' });
    t.equal(text.status, 415);
    const latin = await uploadImport(app, owner.token, 'email\n', { type: 'text/csv; charset=iso-8859-1' });
    t.equal(latin.status, 415);
    const utf8 = await uploadImport(app, owner.token, 'email\n', { type: 'text/csv; charset=UTF-8' });
    t.equal(utf8.status, 202);
    t.match(utf8.body.data, { status: 'queued' });
  });

  await t.test('progress and errors: GET lists recent imports; errors.csv streams every invalid row, formula cells escaped', async (t) => {
    const rows: string[] = [];
    for (let i = 0; i < 130; i++) rows.push(i % 2 === 0 ? `{"email":"ok${i}@example.com"}` : `{"email":"bad${i}@example.com","=SUM(A${i})":"x"}`);
    rows.push('{"email":"last@example.com","a\\"b,c":1}');
    const file = `${rows.join('\n')}\n`;
    const up = await uploadImport(app, owner.token, file, { type: 'application/x-ndjson' });
    const id = up.body.data.id;
    const queued = await call(app, 'GET', `/contacts/imports/${id}`, { token: owner.token });
    t.match(queued.body.data, { status: 'queued', rows_done: 0, rows_total: null, bytes: Buffer.byteLength(file) });
    await runToEnd(ctx, id);
    const done = await call(app, 'GET', `/contacts/imports/${id}`, { token: owner.token });
    t.match(done.body.data, { status: 'completed', rows_total: 131, rows_done: 131, inserted: 65, invalid: 66 });
    t.equal(done.body.data.errors.length, 66, 'all shown (at most 100)');
    t.same(done.body.data.errors[0], { line: 2, reason: '=SUM(A1): is neither a contact column nor a custom field' });
    const csv = await app.inject({ method: 'GET', url: `/api/v1/contacts/imports/${id}/errors.csv`, headers: { authorization: `Bearer ${owner.token}` } });
    t.equal(csv.statusCode, 200);
    t.match(csv.headers['content-type'], /^text\/csv/);
    t.match(csv.headers['content-disposition'], /attachment/);
    const lines = csv.body.trimEnd().split('\r\n');
    t.equal(lines[0], 'line,reason');
    t.equal(lines.length, 67);
    t.equal(lines[1], "2,'=SUM(A1): is neither a contact column nor a custom field", 'a formula cell is prefixed with a quote');
    t.equal(lines[66], '131,"a""b,c: is neither a contact column nor a custom field"', 'quotes doubled, delimiters quoted');
    const list = await call(app, 'GET', '/contacts/imports?limit=2', { token: owner.token });
    t.equal(list.status, 200);
    t.equal(list.body.data.length, 2);
    t.equal(list.body.data[0].id, id, 'newest first');
    t.ok(list.body.next_cursor);
    t.ok(list.body.total > 10);
    const next = await call(app, 'GET', `/contacts/imports?limit=2&after=${list.body.next_cursor}`, { token: owner.token });
    t.not(next.body.data[0].id, id);
  });

  await t.test('isolation and scopes', async (t) => {
    const up = await uploadImport(app, owner.token, 'email\niso@example.com\n');
    const id = up.body.data.id;
    await runToEnd(ctx, id);
    const other = await registerTenant(app);
    for (const url of [`/contacts/imports/${id}`, `/contacts/imports/${id}/errors.csv`, '/contacts/imports/not-a-uuid']) {
      const res = await call(app, 'GET', url, { token: other.token });
      t.equal(res.status, 404, url);
      t.equal(res.body.error, 'not_found');
    }
    const theirs = await call(app, 'GET', '/contacts/imports', { token: other.token });
    t.equal(theirs.body.data.length, 0);
    const reader = await createKey(app, owner, { scopes: ['contacts:read'] });
    const refused = await uploadImport(app, reader.key, 'email\n');
    t.equal(refused.status, 403);
    t.equal(refused.body.error, 'invalid_scope');
    t.equal((await call(app, 'GET', `/contacts/imports/${id}`, { token: reader.key })).status, 200);
    const lists = await createKey(app, owner, { scopes: ['lists:write'] });
    t.equal((await call(app, 'GET', `/contacts/imports/${id}`, { token: lists.key })).status, 403);
    const writer = await createKey(app, owner, { scopes: ['contacts:write'] });
    const ok = await uploadImport(app, writer.key, 'email\nkey@example.com\n');
    t.equal(ok.status, 202);
    await runToEnd(ctx, ok.body.data.id);
    t.ok(await contactByEmail(sql, tenant, 'key@example.com'));
  });
});
