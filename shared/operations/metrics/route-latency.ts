// The API's request-time histogram (method, route template, status): a few array writes per request, exported on scrape exactly as prom-client's Histogram
// would.
import type { Registry } from 'prom-client';

type LabelName = 'method' | 'route' | 'status';
type Labels = Record<LabelName, string>;

interface Series {
  labels: Labels;
  /** Observations per bucket (not cumulative; the last one is above every bound, +Inf only). */
  counts: number[];
  sum: number;
  count: number;
}

/** One exported sample, in the shape prom-client's registry formats (labels, then the series' labels as shared ones). */
interface Sample {
  labels: Record<string, string | number>;
  sharedLabels: Labels;
  value: number;
  metricName: string;
  exemplar: null | undefined;
}

/**
 * prom-client's Histogram.observe({method, route, status}, v) validates the labels, builds a hash string of them
 * and looks the series up by it on every call (a cached labels() child does the same): a large share of an API
 * request's own CPU. Here a series is found through three map reads of strings the request already has, and
 * observed with a bucket search over a dozen numbers. The text a scrape sees is prom-client's (the registry
 * formats these samples with its own code; test/shared/operations/metrics/route-latency.test.ts compares the two).
 */
export class RouteLatencyHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  /** route → method → status → series. */
  private series = new Map<string, Map<string, Map<number, Series>>>();
  /** Every series in the order first observed: the order prom-client exports them in. */
  private ordered: Series[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    if (bounds.some((b, i) => i > 0 && b <= bounds[i - 1]!)) throw new Error(`${name}: buckets must increase`);
    // Duck-typed as a prom-client metric: the registry needs name, help, type, get() and reset() only.
    registry.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  /** One request's time, in seconds. */
  observe(method: string, route: string, status: number, seconds: number): void {
    let byMethod = this.series.get(route);
    if (byMethod === undefined) this.series.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) byMethod.set(method, (byStatus = new Map()));
    let s = byStatus.get(status);
    if (s === undefined) {
      s = { labels: { method, route, status: String(status) }, counts: new Array<number>(this.bounds.length + 1).fill(0), sum: 0, count: 0 };
      byStatus.set(status, s);
      this.ordered.push(s);
    }
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && seconds > bounds[i]!) i++;
    s.counts[i]!++;
    s.sum += seconds;
    s.count++;
  }

  /** As prom-client's getForPromString: samples with the series' labels kept apart (the registry formats them). */
  getForPromString(): { name: string; help: string; type: string; values: Sample[]; aggregator: string } {
    const values: Sample[] = [];
    const bucket = `${this.name}_bucket`;
    for (const s of this.ordered) {
      let acc = 0;
      this.bounds.forEach((le, i) => {
        acc += s.counts[i]!;
        values.push({ labels: { le }, sharedLabels: s.labels, value: acc, metricName: bucket, exemplar: null });
      });
      values.push({ labels: { le: '+Inf' }, sharedLabels: s.labels, value: s.count, metricName: bucket, exemplar: null });
      values.push({ labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${this.name}_sum`, exemplar: undefined });
      values.push({ labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${this.name}_count`, exemplar: undefined });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** As prom-client's get() (registry.getMetricsAsJSON): each sample's own labels, then the series' labels. */
  async get(): Promise<{ name: string; help: string; type: string; values: Omit<Sample, 'sharedLabels'>[]; aggregator: string }> {
    const data = this.getForPromString();
    return { ...data, values: data.values.map(({ sharedLabels, labels, ...rest }) => ({ ...rest, labels: { ...labels, ...sharedLabels } })) };
  }

  reset(): void {
    this.series = new Map();
    this.ordered = [];
  }
}
