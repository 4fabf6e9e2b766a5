/**
 * A strict parser of the Prometheus text exposition format (version 0.0.4), for the metrics
 * tests: every line must be a comment, a `# HELP`/`# TYPE` line or a sample of a declared family;
 * label values must be escaped correctly; a histogram's buckets must be cumulative and end in
 * `+Inf` equal to its `_count`. Any violation throws, naming the line.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface MetricFamily {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help: string;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

function parseValue(text: string, line: number): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  // Prometheus reads values with Go's ParseFloat, which takes NaN in any case; prom-client writes `Nan`.
  if (/^nan$/i.test(text)) return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`line ${line}: bad value '${text}'`);
  return Number(text);
}

function parseLabels(text: string, line: number): Record<string, string> {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const eq = text.indexOf('=', i);
    if (eq < 0) throw new Error(`line ${line}: label without '='`);
    const name = text.slice(i, eq);
    if (!LABEL_NAME.test(name)) throw new Error(`line ${line}: bad label name '${name}'`);
    if (text[eq + 1] !== '"') throw new Error(`line ${line}: label value not quoted`);
    let j = eq + 2;
    let value = '';
    for (; j < text.length && text[j] !== '"'; j++) {
      if (text[j] === '\\') {
        const next = text[++j];
        if (next === 'n') value += '\n';
        else if (next === '\\' || next === '"') value += next;
        else throw new Error(`line ${line}: bad escape '\\${next}'`);
      } else value += text[j];
    }
    if (j >= text.length) throw new Error(`line ${line}: unterminated label value`);
    if (name in labels) throw new Error(`line ${line}: label '${name}' twice`);
    labels[name] = value;
    i = j + 1;
    if (i < text.length) {
      if (text[i] !== ',') throw new Error(`line ${line}: expected ',' between labels`);
      i++;
    }
  }
  return labels;
}

/** The families by name; throws on anything the format does not allow. */
export function parsePrometheusText(text: string): Map<string, MetricFamily> {
  const families = new Map<string, MetricFamily>();
  const family = (name: string): MetricFamily => {
    let f = families.get(name);
    if (!f) families.set(name, (f = { name, type: 'untyped', help: '', samples: [] }));
    return f;
  };
  if (!text.endsWith('\n')) throw new Error('the exposition must end with a line feed');
  const lines = text.slice(0, -1).split('\n');
  lines.forEach((raw, index) => {
    const n = index + 1;
    if (raw === '') return;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(raw);
    if (meta) {
      const [, kind, name, rest] = meta;
      if (!NAME.test(name)) throw new Error(`line ${n}: bad metric name '${name}'`);
      const f = family(name);
      if (kind === 'TYPE') {
        if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(rest)) throw new Error(`line ${n}: bad type '${rest}'`);
        if (f.samples.length) throw new Error(`line ${n}: TYPE after samples of ${name}`);
        f.type = rest as MetricFamily['type'];
      } else f.help = rest;
      return;
    }
    if (raw.startsWith('#')) return;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: (-?\d+))?$/.exec(raw);
    if (!m) throw new Error(`line ${n}: not a sample: ${raw}`);
    const [, name, labelText, valueText] = m;
    const base = [...families.keys()].reverse().find((f) => {
      const type = families.get(f)!.type;
      if (name === f) return type !== 'histogram';
      if (type === 'histogram') return [`${f}_bucket`, `${f}_sum`, `${f}_count`].includes(name);
      if (type === 'summary') return [`${f}_sum`, `${f}_count`].includes(name);
      return false;
    });
    if (!base) throw new Error(`line ${n}: sample '${name}' of no declared family`);
    families.get(base)!.samples.push({ name, labels: labelText ? parseLabels(labelText, n) : {}, value: parseValue(valueText, n) });
  });
  for (const f of families.values()) if (f.type === 'histogram') checkHistogram(f);
  return families;
}

function checkHistogram(f: MetricFamily): void {
  const series = new Map<string, Sample[]>();
  const keyOf = (labels: Record<string, string>) =>
    JSON.stringify(
      Object.entries(labels)
        .filter(([k]) => k !== 'le')
        .sort(([a], [b]) => a.localeCompare(b)),
    );
  for (const s of f.samples.filter((s) => s.name === `${f.name}_bucket`)) {
    if (!('le' in s.labels)) throw new Error(`${f.name}: bucket without le`);
    const k = keyOf(s.labels);
    series.set(k, [...(series.get(k) ?? []), s]);
  }
  for (const [k, buckets] of series) {
    const les = buckets.map((b) => parseValue(b.labels.le, 0));
    for (let i = 1; i < buckets.length; i++) {
      if (les[i] <= les[i - 1] || buckets[i].value < buckets[i - 1].value) throw new Error(`${f.name}${k}: buckets not cumulative`);
    }
    if (les[les.length - 1] !== Infinity) throw new Error(`${f.name}${k}: no +Inf bucket`);
    const count = f.samples.find((s) => s.name === `${f.name}_count` && keyOf(s.labels) === k);
    if (!count || count.value !== buckets[buckets.length - 1].value) throw new Error(`${f.name}${k}: _count differs from the +Inf bucket`);
  }
}

/** The value of the one sample `name` whose labels include `labels` (0 when there is none). */
export function sampleValue(families: Map<string, MetricFamily>, name: string, labels: Record<string, string> = {}): number {
  const matching = [...families.values()]
    .flatMap((f) => f.samples)
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (matching.length > 1) throw new Error(`${name} ${JSON.stringify(labels)} matches ${matching.length} samples`);
  return matching[0]?.value ?? 0;
}
