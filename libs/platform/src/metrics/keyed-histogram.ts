import type { Metric } from 'prom-client';

interface Series<L extends string> {
  labels: Record<L, string>;
  /** Observations per bucket (not cumulative; get() sums them). The last one is +Inf. */
  buckets: number[];
  sum: number;
  count: number;
}

/**
 * A histogram for the per-request and per-statement paths, exposed through a prom-client
 * registry like its own metrics. prom-client's Histogram hashes its labels object on every
 * observe (about 1.5 µs on the benchmark machine, three of them per request counting
 * http_requests_total); this one finds its series by two keys the caller already has (the
 * Express route object and the status; a statement name), without building a string, so an
 * observation is two Map lookups (about 0.15 µs), a short bucket scan and two additions.
 */
export class KeyedHistogram<L extends string> {
  readonly type = 'histogram';
  private readonly byOuter = new Map<unknown, Map<unknown, Series<L>>>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
  ) {}

  /**
   * Records `value` in the series of (`outer`, `inner`); `labelsOf(subject)` gives its labels the
   * first time that pair is seen (a function made once, not per observation). The same labels
   * must always come from the same pair.
   */
  observe<S>(outer: unknown, inner: unknown, value: number, labelsOf: (subject: S) => Record<L, string>, subject: S): void {
    let byInner = this.byOuter.get(outer);
    if (!byInner) this.byOuter.set(outer, (byInner = new Map<unknown, Series<L>>()));
    let s = byInner.get(inner);
    if (!s) {
      s = { labels: labelsOf(subject), buckets: new Array<number>(this.bounds.length + 1).fill(0), sum: 0, count: 0 };
      byInner.set(inner, s);
    }
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]) i++;
    s.buckets[i]++;
    s.sum += value;
    s.count++;
  }

  /** prom-client's metric shape: what Registry.metrics() renders. */
  get() {
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
    for (const s of this.allSeries()) {
      let cumulative = 0;
      s.buckets.forEach((n, i) => {
        cumulative += n;
        values.push({
          labels: { ...s.labels, le: i < this.bounds.length ? this.bounds[i] : '+Inf' },
          value: cumulative,
          metricName: `${this.name}_bucket`,
        });
      });
      values.push({ labels: s.labels, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: s.labels, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: 'sum' };
  }

  /** The observation count of each series as a counter of its own (e.g. http_requests_total). */
  countAs(name: string, help: string) {
    return {
      name,
      help,
      type: 'counter',
      get: () => ({
        name,
        help,
        type: 'counter',
        values: this.allSeries().map((s) => ({ labels: s.labels, value: s.count })),
        aggregator: 'sum',
      }),
      reset: () => undefined,
    };
  }

  reset(): void {
    this.byOuter.clear();
  }

  private allSeries(): Series<L>[] {
    return [...this.byOuter.values()].flatMap((byInner) => [...byInner.values()]);
  }
}

/** Registers a KeyedHistogram (or its countAs view) on a prom-client registry. */
export function asPromMetric(metric: { name: string; get: () => unknown; reset: () => void }): Metric {
  return metric as unknown as Metric;
}
