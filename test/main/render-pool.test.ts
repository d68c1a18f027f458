// The render threads: jobs run off the main thread, a runaway render is stopped at its deadline by ending its thread and the pool goes on, tenants take
// turns, and a tenant's request renders past its queue bound are refused with 429.
import t from 'tap';
import { RenderPool } from '../../main/render-pool.js';
import type { RenderAnswer } from '../../main/render-thread.js';
import type { RenderConfig } from '../../shared/config/index.js';
import type { AppError } from '../../shared/kernel/errors.js';
import { createLogger } from '../../shared/kernel/log.js';
import { renderContext } from '../../shared/sending/templates/liquid.js';
import type { RenderJob } from '../../shared/sending/templates/renderer.js';

const config: RenderConfig = {
  threads: 1,
  thread_nice: 0,
  thread_heap_mb: 256,
  request_budget_ms: 1500,
  campaign_batch_budget_ms: 5000,
  campaign_job_items: 50,
  deadline_grace_ms: 250,
  per_tenant_running: 2,
  per_tenant_queued: 8,
  retry_after_seconds: 1,
};
const log = createLogger('silent');

/** One filter chain in one output: liquidjs checks its time limit between nodes, never inside this (about 12 s of sorting). */
const RUNAWAY =
  '{% assign s = "ab" %}{% for i in (1..20) %}{% assign s = s | append: s %}{% endfor %}{{ s | split: "" | sort | reverse | sort | reverse | sort ' +
  '| reverse | sort | size }}';
/** Nested loops over a variable: stopped by liquidjs at its time limit. */
const LOOPS = '{% for i in items %}{% for j in items %}x{% endfor %}{% endfor %}';
const items = Array.from({ length: 20_000 }, (_, i) => i);

const job = (tenantId: string, source: string, budgetMs = 1500, variables: Record<string, unknown> = {}): RenderJob => ({
  tenantId,
  sources: [{ field: 'body_text', part: 'body_text', source }],
  items: [{ context: renderContext({ variables }), sources: [0] }],
  budgetMs,
});

function poolOf(t: { teardown(fn: () => unknown): void }, over: Partial<RenderConfig> = {}): { pool: RenderPool; answers: RenderAnswer[] } {
  const pool = new RenderPool({ ...config, ...over }, log);
  const answers: RenderAnswer[] = [];
  pool.onAnswer = (a) => answers.push(a);
  t.teardown(() => pool.close());
  return { pool, answers };
}

t.test('a job renders on a worker thread, never the main one', async (t) => {
  const { pool, answers } = poolOf(t);
  const report = await pool.render(job('a', 'Hi {{ who }}', 1500, { who: 'Ann' }));
  t.same(report.items, [{ ok: true, outputs: ['Hi Ann'] }]);
  t.equal(answers.length, 1);
  t.equal(answers[0]!.onMainThread, false, 'rendered off the main thread');
  t.not(answers[0]!.threadId, 0, 'on a worker thread');
});

t.test('a runaway filter chain is stopped at the deadline by ending its thread; the pool renders on with a new one', { timeout: 60_000 }, async (t) => {
  const { pool, answers } = poolOf(t, { deadline_grace_ms: 100 });
  await pool.render(job('a', 'warm'));
  const before = answers[0]!.threadId;
  const report = await pool.render(job('a', RUNAWAY, 200));
  t.same(report.items, [
    { ok: false, field: 'body_text', message: 'body_text: rendering exceeded its time budget of 200 ms and was stopped', overBudget: true },
  ]);
  t.equal(answers.length, 1, 'the runaway job never answered: its thread was ended');
  const after = await pool.render(job('a', 'still {{ x }}', 1500, { x: 'here' }));
  t.same(after.items, [{ ok: true, outputs: ['still here'] }], 'the next job renders');
  t.not(answers[1]!.threadId, before, 'on a new thread');
});

t.test(
  "a render past liquidjs's limit fails over budget naming the part and the limit, and the rest of the job is not rendered",
  { timeout: 30_000 },
  async (t) => {
    const { pool } = poolOf(t);
    const report = await pool.render({
      tenantId: 'a',
      sources: [{ field: 'body_text', part: 'body_text', source: LOOPS }],
      items: [0, 1, 2].map(() => ({ context: renderContext({ variables: { items } }), sources: [0] })),
      budgetMs: 5000,
    });
    t.equal(report.items.length, 3);
    t.match(report.items[0], {
      ok: false,
      field: 'body_text',
      overBudget: true,
      message: /^body_text: could not render at line \d+, column \d+: template render limit exceeded \(500 ms\)$/,
    });
    t.same(
      report.items.slice(1),
      [1, 2].map(() => ({
        ok: false,
        field: 'body_text',
        message: 'body_text: rendering exceeded its time budget of 5000 ms and was stopped',
        overBudget: true,
      })),
      "the others fail over the job's budget without a render of their own (no line and column: they were never started)",
    );
  },
);

t.test("tenants take turns: B's job runs in its turn, not after all of A's", { timeout: 60_000 }, async (t) => {
  const { pool } = poolOf(t, { per_tenant_running: 1 });
  const done: string[] = [];
  const heavy = (n: number) => pool.render(job('a', LOOPS, 1500, { items })).then(() => done.push(`a${n}`));
  const all = [1, 2, 3, 4].map(heavy);
  all.push(pool.render(job('b', 'light')).then(() => done.push('b')));
  await Promise.all(all);
  // a2 was waiting before B came; then the turns alternate (first come, first served would put B last).
  t.same(done, ['a1', 'a2', 'b', 'a3', 'a4'], 'B had its turn');
});

t.test("a tenant's request renders past its queue bound are refused with 429 and Retry-After; waiting jobs are not", { timeout: 60_000 }, async (t) => {
  const { pool } = poolOf(t, { per_tenant_running: 1, per_tenant_queued: 1, retry_after_seconds: 2 });
  const first = pool.render(job('a', LOOPS, 1500, { items }), { shed: true });
  const second = pool.render(job('a', LOOPS, 1500, { items }), { shed: true });
  const refused = await pool.render(job('a', 'x'), { shed: true }).then(
    () => undefined,
    (err: AppError) => err,
  );
  t.match(refused, { slug: 'rate_limited', status: 429, headers: { 'Retry-After': '2' }, message: /too many template renders/ }, 'the third is refused');
  const campaign = pool.render(job('a', 'x'));
  const other = pool.render(job('b', 'x'), { shed: true });
  const reports = await Promise.all([first, second, campaign, other]);
  t.same(
    reports.map((r) => r.items[0]!.ok),
    [false, false, true, true],
    'a batch job waits instead, and another tenant is not refused',
  );
});
