// The operator port: GET /metrics over real HTTP in Prometheus's text format, API latency labelled by route template, queue depths read on scrape, nothing
// else served.
import { request } from 'node:http';
import t from 'tap';
import { startOperatorServer } from '../../api/operator-server.js';
import { createLogger } from '../../shared/kernel/log.js';
import { randomUUID } from 'node:crypto';
import { DELIVERY_QUEUE_NAME } from '../../shared/jobs/depth.js';
import { buildTestApp, call, createKey, registerTenant } from '../helpers/app.js';
import { insertTenant } from '../helpers/tenant-rows.js';

const { app, ctx, sql } = await buildTestApp(t);
const operator = await startOperatorServer(ctx.metrics, createLogger('silent'), { port: 0, host: '127.0.0.1' });
t.teardown(() => operator.stop());

function get(path: string, method = 'GET'): Promise<{ status: number; type: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: operator.port, path, method }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, type: res.headers['content-type'], body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The sample lines of one metric family, e.g. every `mailpath_api_request_duration_seconds_count{...} n`. */
const samples = (body: string, name: string) => body.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));

t.test('API requests are measured per route template, never per raw URL; unknown paths share one series', async (t) => {
  const tenant = await registerTenant(app);
  const { key } = await createKey(app, tenant);
  for (let i = 0; i < 3; i++) t.equal((await call(app, 'GET', '/whoami', { token: key })).status, 200);
  const domainId = '00000000-0000-4000-8000-000000000001';
  t.equal((await call(app, 'GET', `/domains/${domainId}`, { token: key })).status, 404);
  t.equal((await call(app, 'GET', '/no-such-thing/12345')).status, 404);

  const scrape = await get('/metrics');
  t.equal(scrape.status, 200);
  t.match(scrape.type, /^text\/plain; version=0\.0\.4/);
  const counts = samples(scrape.body, 'mailpath_api_request_duration_seconds_count');
  t.ok(counts.includes('mailpath_api_request_duration_seconds_count{method="GET",route="/api/v1/whoami",status="200"} 3'), 'whoami: 3 under its template');
  t.ok(
    counts.some((l) => l.startsWith('mailpath_api_request_duration_seconds_count{method="GET",route="/api/v1/domains/:id",status="404"}')),
    'the id stays out of the label',
  );
  t.ok(
    counts.some((l) => l.startsWith('mailpath_api_request_duration_seconds_count{method="GET",route="unmatched",status="404"}')),
    'unknown path: unmatched',
  );
  t.notMatch(scrape.body, domainId, 'no raw id anywhere');
  t.notMatch(scrape.body, 'no-such-thing', 'no raw unknown path anywhere');
  t.match(scrape.body, /# HELP mailpath_smtp_sessions_total /, 'every family is described');
  t.match(scrape.body, /# TYPE mailpath_delivery_latency_seconds histogram/);
  t.match(scrape.body, /mailpath_process_cpu_user_seconds_total /, "the process's own figures ride along");
});

t.test('queue depth per job queue (the delivery queue among them) is read on scrape', async (t) => {
  const before = await get('/metrics');
  const waitingLine = (body: string) => samples(body, 'mailpath_queue_jobs_waiting').find((l) => l.includes(`queue="${DELIVERY_QUEUE_NAME}"`));
  t.ok(waitingLine(before.body), 'the delivery queue is listed even when idle');
  t.ok(
    samples(before.body, 'mailpath_queue_jobs_waiting').some((l) => l.includes('queue="campaign-fanout"')),
    'pg-boss queues too',
  );
  // A send deferred for an hour: in the queue, waiting, held by no worker.
  const tenantId = await insertTenant(sql);
  const id = randomUUID();
  const at = new Date();
  await ctx.writer.write([
    {
      send: {
        id,
        tenant_id: tenantId,
        domain_id: null,
        api_key_id: null,
        source: 'api',
        mode: 'live',
        status: 'deferred',
        from_email: 'a@w.example',
        to_email: 'x@d.example',
        subject: 's',
        message_id: `${id}@mx.test`,
        envelope_from: 'b@mx.test',
        gate_decisions: [],
        message: Buffer.from('m'),
        defer_until: null,
        status_detail: null,
        campaign_id: null,
        campaign_variant: null,
        contact_id: null,
        created_at: at,
      },
      events: [],
      delivery: { startAfter: new Date(at.getTime() + 3600_000), tenant: { status: 'active', is_sandbox: false } },
    },
  ]);
  // The scrape cache (queue_depth_cache_ms) may hold the last read: a bounded wait for a fresh one.
  let line: string | undefined;
  for (let i = 0; i < 40; i++) {
    line = waitingLine((await get('/metrics')).body);
    if (line?.endsWith(' 1')) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  t.equal(line, `mailpath_queue_jobs_waiting{queue="${DELIVERY_QUEUE_NAME}"} 1`);
});

t.test('the operator port serves only GET /metrics', async (t) => {
  t.equal((await get('/')).status, 404);
  t.equal((await get('/metrics/x')).status, 404);
  t.equal((await get('/metrics', 'POST')).status, 404);
  const head = await get('/metrics', 'HEAD');
  t.equal(head.status, 200);
  t.equal(head.body, '');
});
