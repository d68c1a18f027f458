// uuidV7(): version 7 ids made in the process, ordered by their milliseconds.
import t from 'tap';
import { uuidV7 } from '../../../shared/db/uuid-v7.js';

t.test('version 7, variant 10, the given milliseconds in the first 48 bits, unique and time-ordered', async (t) => {
  const at = Date.parse('2026-05-04T10:00:00.123Z');
  const ids = Array.from({ length: 1000 }, (_, i) => uuidV7(at + i));
  t.equal(new Set(ids).size, ids.length);
  for (const id of ids.slice(0, 20)) t.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  t.equal(parseInt(ids[0]!.replace(/-/g, '').slice(0, 12), 16), at);
  t.same([...ids].sort(), ids, 'later milliseconds sort later');
});
