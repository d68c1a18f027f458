// Tenants' renders run off the API's event loop: one tenant's worst-case renders leave another's requests answered promptly and its own renders working;
// over budget is 422 naming the part and the limit, past the tenant's queue 429.
import t from 'tap';
import type { RenderPool } from '../../../main/render-pool.js';
import { buildTestApp, call, registerTenant } from '../../helpers/app.js';

const s = await buildTestApp(t);
await s.app.listen({ host: '127.0.0.1', port: 0 });
const address = s.app.server.address();
const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/api/v1`;

/** A request over the loopback socket; `at` is when the answer came. */
async function request(method: string, path: string, token: string, body?: unknown): Promise<{ status: number; body: any; headers: Headers; at: number }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    signal: AbortSignal.timeout(60_000),
  });
  const json = await res.json();
  return { status: res.status, body: json, headers: res.headers, at: performance.now() };
}

/** 25 million loop turns over an array the template builds itself: stopped by the time limit of its part. */
const WORST = `{% assign xs = "${'x'.repeat(5000)}" | split: "" %}{% for i in xs %}{% for j in xs %}{{ j }}{% endfor %}{% endfor %}`;

async function template(token: string, body: Record<string, unknown>): Promise<string> {
  const res = await request('POST', '/templates', token, { name: `T ${Math.random().toString(36).slice(2)}`, subject: 'Hi', ...body });
  if (res.status !== 201) throw new Error(`template: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.id;
}

t.test(
  "20 worst-case renders of tenant A: B's /whoami answers promptly and B renders; A gets 422 naming the part and the limit, or 429",
  { timeout: 120_000 },
  async (t) => {
    const a = await registerTenant(s.app);
    const b = await registerTenant(s.app);
    const heavy = await template(a.token, { body_text: WORST });
    const light = await template(b.token, { subject: 'Hello {{ name }}', body_text: 'Plan {{ plan }}' });
    const threads: boolean[] = [];
    (s.ctx.renderer as RenderPool).onAnswer = (answer) => threads.push(answer.onMainThread);
    t.teardown(() => {
      (s.ctx.renderer as RenderPool).onAnswer = undefined;
    });

    // The render thread started before (its start is no part of what is measured).
    t.equal((await request('POST', `/templates/${light}/render`, b.token, {})).status, 200);
    const storm = Array.from({ length: 20 }, () => request('POST', `/templates/${heavy}/render`, a.token, {}));
    // B's calls while A's renders run, once A's requests reached the render pool (the first answer of the storm is
    // back: a refusal, or the first render stopped at its limit), each answer waited for in turn.
    await Promise.race(storm);
    for (let i = 0; i < 8; i++) t.equal((await request('GET', '/whoami', b.token)).status, 200);
    const mine = await request('POST', `/templates/${light}/render`, b.token, { variables: { name: 'Bea', plan: 'pro' } });
    const answers = await Promise.all(storm);
    t.ok(
      answers.some((r) => r.at > mine.at),
      "A's renders were still running when B was done: B's eight /whoami calls and its render were answered under A's storm",
    );
    t.equal(mine.status, 200, "B's own render works meanwhile");
    t.same(mine.body.data, { subject: 'Hello Bea', html: null, text: 'Plan pro' });
    const refused = answers.filter((r) => r.status === 429);
    const over = answers.filter((r) => r.status === 422);
    t.equal(refused.length + over.length, 20, "each of A's renders is 422 or 429");
    t.ok(over.length >= 1);
    for (const r of over) {
      t.equal(r.body.error, 'validation_error');
      t.match(
        r.body.message,
        /^body_text: could not render at line \d+, column \d+: template render limit exceeded \(500 ms\)$/,
        'names the part and the limit',
      );
    }
    for (const r of refused) {
      t.equal(r.body.error, 'rate_limited');
      t.equal(r.headers.get('retry-after'), String(s.config.render.retry_after_seconds));
    }
    t.ok(threads.length > 0 && threads.every((onMain) => !onMain), `all ${threads.length} renders ran on render threads, none on the API's main thread`);
  },
);

/**
 * One filter chain in one output, which liquidjs's time limit (checked between nodes) cannot stop: seconds of sorting
 * a 2-million-element array. Its app's request budget is 100 ms, so the budget stops it during the first sort, long
 * before the filters' memory allowance would (reached only at the first reverse, whatever the machine's speed).
 */
const RUNAWAY =
  '{% assign s = "ab" %}{% for i in (1..20) %}{% assign s = s | append: s %}{% endfor %}{{ s | split: "" | sort | reverse | sort | reverse | sort ' +
  '| reverse | sort | size }}';

t.test("a runaway render is stopped at the request's budget: 422 naming the part and the budget; the next render works", { timeout: 60_000 }, async (t) => {
  // Threads at the main thread's priority: a niced thread on a machine busy with other test files can take longer
  // than this tight budget for even the next, trivial render.
  const tight = await buildTestApp(t, { env: { MAILPATH_CONFIG__RENDER__REQUEST_BUDGET_MS: '100', MAILPATH_CONFIG__RENDER__THREAD_NICE: '0' } });
  const a = await registerTenant(tight.app);
  const create = async (body_text: string) =>
    (await call(tight.app, 'POST', '/templates', { token: a.token, body: { name: `T ${Math.random().toString(36).slice(2)}`, subject: 'Hi', body_text } })).body
      .data.id;
  const runaway = await create(RUNAWAY);
  const res = await call(tight.app, 'POST', `/templates/${runaway}/render`, { token: a.token, body: {} });
  t.equal(res.status, 422);
  t.same(res.body.message, `body_text: rendering exceeded its time budget of ${tight.config.render.request_budget_ms} ms and was stopped`);
  const fine = await create('ok {{ n }}');
  const next = await call(tight.app, 'POST', `/templates/${fine}/render`, { token: a.token, body: { variables: { n: 1 } } });
  t.equal(next.status, 200);
  t.equal(next.body.data.text, 'ok 1');
});
