// Query timing in memory: per statement and window, normalized text, the statement cap, bounded samples, and closed windows handed over once.
import t from 'tap';
import { OTHER_STATEMENTS, QueryTimings, normalizeStatement } from '../../../../shared/operations/observability/query-timing.js';

t.test('statements are grouped by normalized text within a window; a closed window is taken once, the open one stays', async (t) => {
  let now = Date.parse('2026-03-01T10:02:00Z');
  const timings = new QueryTimings({ windowMinutes: 5, maxStatementsPerWindow: 2, samplesPerStatement: 3 }, () => now);
  timings.record('select  1\n from x', 10);
  timings.record('select 1 from x', 30);
  timings.record('select 2', 5);
  timings.record('select 3', 7);
  timings.record('select 4', 9);
  const first = timings.take();
  t.equal(first.length, 1);
  t.equal(first[0]!.windowStart.toISOString(), '2026-03-01T10:00:00.000Z');
  const byText = new Map(first[0]!.timings.map((x) => [x.statement, x]));
  t.match(byText.get('select 1 from x'), { calls: 2, totalMs: 40, maxMs: 30, samples: [10, 30] });
  t.match(byText.get(OTHER_STATEMENTS), { calls: 2, totalMs: 16 }, 'past the cap, one row for the rest');
  t.equal(byText.size, 3);

  for (let i = 0; i < 50; i++) timings.record('select 1 from x', i);
  t.equal(timings.take()[0]!.timings.find((x) => x.statement === 'select 1 from x')!.samples.length, 3, 'samples bounded');
  now += 5 * 60_000;
  timings.record('select 2', 1);
  const later = timings.take();
  t.same(
    later.map((w) => w.windowStart.toISOString()),
    ['2026-03-01T10:00:00.000Z', '2026-03-01T10:05:00.000Z'],
    'the closed window one last time, then the open one',
  );
  t.same(
    timings.take().map((w) => w.windowStart.toISOString()),
    ['2026-03-01T10:05:00.000Z'],
  );
});

t.test('statement text is flattened and capped', async (t) => {
  t.equal(normalizeStatement('  select *\n\t from   t  '), 'select * from t');
  t.equal(normalizeStatement('x'.repeat(5000)).length, 2001);
});
