// Keyset cursors: encode/decode round trip, pageOf's next_cursor, and every malformed cursor refused as a bad request.
import t from 'tap';
import { decodeCursor, encodeCursor, pageOf } from '../../../shared/kernel/cursor.js';
import { AppError } from '../../../shared/kernel/errors.js';

const ID = '0b9a3f1e-5d2c-4e8a-9f10-2b3c4d5e6f70';
const AT = new Date('2030-01-02T03:04:05.678Z');
const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

/** Asserts decodeCursor refuses cursor with a 400 bad_request AppError. */
function refuses(
  t: { ok(v: unknown, m: string): unknown; equal(a: unknown, b: unknown, m: string): unknown; match(a: unknown, b: RegExp, m: string): unknown },
  cursor: string,
  what: string,
): void {
  let caught: unknown;
  try {
    decodeCursor(cursor);
  } catch (err) {
    caught = err;
  }
  t.ok(caught instanceof AppError, `${what}: AppError`);
  t.equal((caught as AppError | undefined)?.slug, 'bad_request', `${what}: bad_request`);
  t.equal((caught as AppError | undefined)?.status, 400, `${what}: 400`);
  t.match((caught as Error | undefined)?.message, /^after: not a cursor returned by this list$/, `${what}: names the parameter`);
}

t.test('encode and decode round trip', async (t) => {
  const cursor = encodeCursor({ at: AT, id: ID });
  t.match(cursor, /^[A-Za-z0-9_-]+$/, 'URL-safe, unpadded');
  t.equal(Buffer.from(cursor, 'base64url').toString('utf8'), `${AT.toISOString()}|${ID}`, 'opaque to clients, not to us');
  t.same(decodeCursor(cursor), { at: AT, id: ID });
  for (const at of [new Date(0), new Date('1999-12-31T23:59:59.999Z'), new Date('2100-06-30T12:00:00.001Z')]) {
    const back = decodeCursor(encodeCursor({ at, id: ID }));
    t.equal(back.at.getTime(), at.getTime(), at.toISOString());
    t.equal(back.id, ID);
  }
  const upper = ID.toUpperCase();
  t.same(decodeCursor(encodeCursor({ at: AT, id: upper })), { at: AT, id: upper }, 'whatever id was encoded comes back');
});

t.test('pageOf sets next_cursor only when a further row was fetched', async (t) => {
  const rows = Array.from({ length: 5 }, (_, i) => ({
    id: `0b9a3f1e-5d2c-4e8a-9f10-2b3c4d5e6f7${i}`,
    created_at: new Date(AT.getTime() - i * 1000),
    name: `row ${i}`,
  }));
  const more = pageOf(rows.slice(0, 4), 3);
  t.same(more.items, rows.slice(0, 3), 'limit rows');
  t.equal(more.next_cursor, encodeCursor({ at: rows[2]!.created_at, id: rows[2]!.id }), 'the cursor is the last returned row');
  t.same(decodeCursor(more.next_cursor!), { at: rows[2]!.created_at, id: rows[2]!.id });

  t.same(pageOf(rows.slice(0, 3), 3), { items: rows.slice(0, 3), next_cursor: null }, 'exactly limit rows: no next page');
  t.same(pageOf(rows.slice(0, 2), 3), { items: rows.slice(0, 2), next_cursor: null }, 'fewer: no next page');
  t.same(pageOf([], 3), { items: [], next_cursor: null }, 'none');
  const one = pageOf(rows.slice(0, 2), 1);
  t.equal(one.items.length, 1);
  t.equal(one.next_cursor, encodeCursor({ at: rows[0]!.created_at, id: rows[0]!.id }), 'a page of one');
  const all = pageOf(rows, 10);
  t.equal(all.items.length, 5);
  t.equal(all.next_cursor, null);
});

t.test('malformed cursors are a 400 bad_request', async (t) => {
  const good = encodeCursor({ at: AT, id: ID });
  const cases: [string, string][] = [
    ['', 'empty'],
    ['garbage', 'garbage'],
    ['!!!!', 'not base64 at all'],
    ['%00%00', 'URL-encoded junk'],
    [b64('hello world'), 'base64 of text without a separator'],
    [b64(`${AT.toISOString()}|not-a-uuid`), 'an id that is not a UUID'],
    [b64(`${AT.toISOString()}|`), 'an empty id'],
    [b64(`${AT.toISOString()}`), 'no id'],
    [b64(`${AT.toISOString()}|${ID.slice(0, -1)}`), 'a short id'],
    [b64(`${AT.toISOString()}|${ID}|extra`), 'an extra field'],
    [b64(`${AT.toISOString()}|${ID}|`), 'an empty extra field'],
    [b64(`|${ID}`), 'no time'],
    [b64(`yesterday|${ID}`), 'a time that is not one'],
    [b64(`2030-13-01T00:00:00.000Z|${ID}`), 'month 13'],
    [b64(`2030-01-02T03:04:05Z|${ID}`), 'a time without milliseconds (non-canonical)'],
    [b64(`2030-01-02T04:04:05.678+01:00|${ID}`), 'the same instant with an offset (non-canonical)'],
    [b64(`${AT.getTime()}|${ID}`), 'epoch milliseconds'],
    [b64(` ${AT.toISOString()}|${ID}`), 'a leading space'],
    [b64(`${AT.toISOString()}|${ID} `), 'a trailing space'],
    [`${good}=`, 'padded'],
    [Buffer.from(`${AT.toISOString()}|${ID}`).toString('base64'), 'standard base64 with padding'],
    [`${good}.`, 'a trailing character base64url ignores'],
    [` ${good}`, 'a leading space'],
    [`${good.slice(0, -1)}${good.endsWith('A') ? 'B' : 'A'}`, 'a changed last character'],
    [good.slice(0, -2), 'truncated'],
  ];
  for (const [cursor, what] of cases) refuses(t, cursor, what);
  t.same(decodeCursor(good), { at: AT, id: ID }, 'the genuine cursor still decodes');
});
