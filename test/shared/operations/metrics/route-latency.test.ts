// The API latency histogram of its own: a scrape shows exactly what prom-client's Histogram shows for the same observations.
import t from 'tap';
import { Histogram, Registry } from 'prom-client';
import { RouteLatencyHistogram } from '../../../../shared/operations/metrics/route-latency.js';
import { Metrics } from '../../../../shared/operations/metrics/metrics.js';

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const NAME = 'test_api_request_duration_seconds';
const HELP = 'API request time, by method, route and status.';

/** The same observations into ours and into prom-client's, each on a registry of its own. */
function both() {
  const oursRegistry = new Registry();
  const theirsRegistry = new Registry();
  const ours = new RouteLatencyHistogram(NAME, HELP, BUCKETS, oursRegistry);
  const theirs = new Histogram({ name: NAME, help: HELP, labelNames: ['method', 'route', 'status'], buckets: BUCKETS, registers: [theirsRegistry] });
  const observe = (method: string, route: string, status: number, seconds: number) => {
    ours.observe(method, route, status, seconds);
    theirs.observe({ method, route, status: String(status) }, seconds);
  };
  return { ours, theirs, oursRegistry, theirsRegistry, observe };
}

t.test('the text exposition is byte for byte prom-client’s, bucket edges and +Inf included', async (t) => {
  const { oursRegistry, theirsRegistry, observe } = both();
  // Values on a bound (le is inclusive), between bounds, below the first and above the last.
  const values = [0, 0.0001, 0.001, 0.0010001, 0.003, 0.01, 0.2, 0.25, 1, 7, 10, 10.5, 120];
  for (const [i, v] of values.entries()) {
    observe('GET', '/api/v1/whoami', 200, v);
    observe(i % 2 ? 'POST' : 'GET', '/api/v1/domains/:id', i % 3 ? 404 : 200, v / 3);
  }
  observe('GET', 'unmatched', 404, 0.002);
  const ours = await oursRegistry.metrics();
  t.equal(ours, await theirsRegistry.metrics());
  t.match(ours, 'test_api_request_duration_seconds_count{method="GET",route="/api/v1/whoami",status="200"} 13');
  t.match(ours, 'test_api_request_duration_seconds_bucket{le="+Inf",method="GET",route="unmatched",status="404"} 1');
  t.match(ours, 'test_api_request_duration_seconds_bucket{le="0.001",method="GET",route="/api/v1/whoami",status="200"} 3', 'le is inclusive');
});

t.test('nothing observed: the family is described with no samples, as prom-client does', async (t) => {
  const { oursRegistry, theirsRegistry } = both();
  t.equal(await oursRegistry.metrics(), await theirsRegistry.metrics());
});

t.test('the JSON form (getMetricsAsJSON) and reset match too', async (t) => {
  const { ours, theirs, oursRegistry, theirsRegistry, observe } = both();
  observe('GET', '/api/v1/whoami', 200, 0.004);
  observe('GET', '/api/v1/whoami', 429, 0.0004);
  t.same(await oursRegistry.getMetricsAsJSON(), await theirsRegistry.getMetricsAsJSON());
  ours.reset();
  theirs.reset();
  t.equal(await oursRegistry.metrics(), await theirsRegistry.metrics(), 'after reset');
});

t.test("the process's metrics carry it under its name, beside prom-client's instruments", async (t) => {
  const metrics = new Metrics({ processMetrics: false });
  metrics.apiLatency.observe('GET', '/api/v1/whoami', 200, 0.003);
  const { body } = await metrics.exposition();
  t.match(body, '# TYPE mailpath_api_request_duration_seconds histogram');
  t.match(body, 'mailpath_api_request_duration_seconds_bucket{le="0.005",method="GET",route="/api/v1/whoami",status="200"} 1');
  t.match(body, 'mailpath_api_request_duration_seconds_sum{method="GET",route="/api/v1/whoami",status="200"} 0.003');
  t.match(body, '# TYPE mailpath_delivery_latency_seconds histogram');
});

t.test('buckets must increase', async (t) => {
  t.throws(() => new RouteLatencyHistogram('x', 'x', [1, 1], new Registry()), /buckets must increase/);
});
