// The file readers: CSV records and NDJSON lines come out the same however the file is cut into chunks; errors-csv cells are spreadsheet-safe; header planning.
import t from 'tap';
import { planColumns } from '../../../shared/audiences/imports/columns.js';
import { csvRecords, FileError } from '../../../shared/audiences/imports/csv-source.js';
import { csvCell } from '../../../shared/audiences/imports/errors-csv.js';
import { lines } from '../../../shared/audiences/imports/lines.js';
import { ndjsonRecords } from '../../../shared/audiences/imports/ndjson-source.js';
import { parseDelimiter, parseMapping } from '../../../shared/audiences/imports/options.js';

/** The file cut into pieces of `size` bytes. */
async function* cut(file: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < file.length; i += size) yield file.subarray(i, i + size);
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

const csv = (file: Buffer, size: number, maxRecordBytes = 1 << 20) => collect(csvRecords(cut(file, size), { delimiter: ',', maxRecordBytes }));

t.test('CSV records do not depend on where chunks end: BOM, CRLF, quotes and multi-byte characters split anywhere', async (t) => {
  const file = Buffer.from('\ufeffemail,name\r\na@x.io,"Zoë, ""Z"""\r\n\r\nb@x.io,"two\r\nlines"\nc@x.io,日本語\rd@x.io,end', 'utf8');
  const whole = await csv(file, file.length);
  t.same(whole, [
    { header: ['email', 'name'] },
    { line: 2, cells: ['a@x.io', 'Zoë, "Z"'] },
    { line: 4, cells: ['b@x.io', 'two\r\nlines'] },
    { line: 6, cells: ['c@x.io', '日本語'] },
    { line: 7, cells: ['d@x.io', 'end'] },
  ]);
  for (const size of [1, 2, 3, 5, 7]) t.same(await csv(file, size), whole, `chunks of ${size} bytes`);
});

t.test(
  'CSV: a cell that is not UTF-8 makes its record invalid; blank records are skipped; a parse error ends the file after the records before it',
  async (t) => {
    const bad = Buffer.concat([Buffer.from('email\na@x.io\n'), Buffer.from([0xff, 0xfe, 0x0a]), Buffer.from(' , \nb@x.io\n')]);
    t.same(await csv(bad, 4), [{ header: ['email'] }, { line: 2, cells: ['a@x.io'] }, { line: 3, error: 'invalid UTF-8' }, { line: 5, cells: ['b@x.io'] }]);
    const records: unknown[] = [];
    const err = await (async () => {
      for await (const r of csvRecords(cut(Buffer.from('email\na@x.io\nb@x.io\n"c@x.io\n'), 1 << 20), { delimiter: ',', maxRecordBytes: 1024 }))
        records.push(r);
    })().catch((e: unknown) => e);
    t.type(err, FileError);
    t.match((err as Error).message, /^line 4: a quoted field is never closed/);
    t.same(
      records,
      [{ header: ['email'] }, { line: 2, cells: ['a@x.io'] }, { line: 3, cells: ['b@x.io'] }],
      'records in the same chunk before the error are not lost',
    );
    const header = await collect(csvRecords(cut(Buffer.concat([Buffer.from([0xff]), Buffer.from('\n')]), 10), { delimiter: ',', maxRecordBytes: 1024 })).catch(
      (e: unknown) => e,
    );
    t.match((header as Error).message, /header is not valid UTF-8/);
  },
);

t.test('lines: LF split anywhere, a final line without LF, an over-long line reported without its bytes', async (t) => {
  const file = Buffer.from(`one\ntwo\r\n${'x'.repeat(50)}\nlast`);
  for (const size of [1, 3, 64]) {
    const out = (await collect(lines(cut(file, size), 20))).map((l) => ('tooLong' in l ? `${l.line}:long` : `${l.line}:${l.bytes.toString()}`));
    t.same(out, ['1:one', '2:two\r', '3:long', '4:last'], `chunks of ${size}`);
  }
});

t.test('NDJSON records', async (t) => {
  const file = Buffer.from('\ufeff{"email":"a@x.io"}\r\n\n  \n[1]\n{"email":\n"text"\n{"email":"b@x.io"}');
  t.same(await collect(ndjsonRecords(cut(file, 3), { maxRecordBytes: 100 })), [
    { line: 1, value: { email: 'a@x.io' } },
    { line: 4, error: 'must be a JSON object (one contact per line)' },
    { line: 5, error: 'not valid JSON' },
    { line: 6, error: 'must be a JSON object (one contact per line)' },
    { line: 7, value: { email: 'b@x.io' } },
  ]);
});

t.test('errors.csv cells: formulas neutralised, quotes doubled, delimiters and line breaks quoted', async (t) => {
  t.equal(csvCell('email: must be an email address'), 'email: must be an email address');
  for (const start of ['=', '+', '-', '@', '\t', '\r'])
    t.equal(csvCell(`${start}1+1`).replace(/^"/, '')[0], "'", `a cell starting with ${JSON.stringify(start)}`);
  t.equal(csvCell('a "b", c'), '"a ""b"", c"');
  t.equal(csvCell('=cmd|" /c calc"'), '"\'=cmd|"" /c calc"""');
  t.equal(csvCell('two\nlines'), '"two\nlines"');
});

t.test('header planning and the mapping option', async (t) => {
  const catalog = new Set(['plan']);
  t.match(planColumns(['Email', 'First Name', 'plan', 'id'], {}, catalog), {
    targets: [{ kind: 'email' }, { kind: 'profile', column: 'first_name' }, { kind: 'custom', key: 'plan' }, { kind: 'ignore' }],
    profile: ['first_name'],
    customKeys: ['plan'],
    status: false,
  });
  t.match(planColumns(['email', 'Email'], {}, catalog), /both map to email/);
  t.match(planColumns(['email', 'email'], {}, catalog), /names a column twice/);
  t.match(planColumns(['email', 'custom_fields.gone'], {}, catalog), /catalog does not have: custom_fields.gone/);
  t.match(planColumns(['mail'], {}, catalog), /no column holds the email address/);
  t.notMatch(planColumns(['mail'], {}, catalog), /delimited/, 'no hint for a header without another delimiter in it');
  t.match(
    planColumns(['email;first_name;plan'], {}, catalog),
    /no column holds the email address: .*; the header looks delimited by ";": pass \?delimiter=%3B$/,
  );
  t.match(planColumns(['email\tfirst_name\tplan', 'x;y'], {}, catalog), /the header looks delimited by tabs: pass \?delimiter=tab$/, 'the most frequent wins');
  t.match(planColumns(['mail', 'x'], { mail: 'email', x: null }, catalog), { targets: [{ kind: 'email' }, { kind: 'ignore' }] });
  t.same(parseMapping('{"A":"email","B":"plan","C":null,"D":"custom_fields.x"}'), { A: 'email', B: 'custom_fields.plan', C: null, D: 'custom_fields.x' });
  t.throws(() => parseMapping('{"A":"email","B":"email"}'), /another header maps to already/);
  const proto = parseMapping('{"__proto__":"email"}');
  t.same(Object.entries(proto), [['__proto__', 'email']], 'a header named __proto__ is a key, not a prototype');
  t.match(planColumns(['__proto__'], proto, catalog), { targets: [{ kind: 'email' }] });
  t.throws(() => parseMapping('{"A":"created_at"}'), /not a writable contact column/);
  t.throws(() => parseMapping('[1]'), /JSON object/);
  t.equal(parseDelimiter(undefined), ',');
  t.equal(parseDelimiter('tab'), '\t');
  t.equal(parseDelimiter('|'), '|');
  t.throws(() => parseDelimiter('"'));
  t.throws(() => parseDelimiter(',,'));
});
