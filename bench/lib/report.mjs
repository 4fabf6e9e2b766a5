// The benchmark report: one Markdown table per data set, with the floor and the ratio next to
// every scenario, the target and whether it was met, and the growth table of the scale runs.

const n0 = (v) => Math.round(v).toLocaleString('en-US');
const ms = (v) => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2));
const x = (v) => `${v.toFixed(2)}×`;
const cpu = (p, f) => (p.cpuUsPerRequest == null || f.cpuUsPerRequest == null ? '' : `${n0(p.cpuUsPerRequest)} / ${n0(f.cpuUsPerRequest)}`);

/** The value a scenario's target is judged on, and whether it is met. */
export function judge(r, results) {
  const t = r.target;
  if (!t) return { value: undefined, met: undefined };
  let value;
  if (t.metric === 'throughput') value = r.product.requestsPerSecond / r.floor.requestsPerSecond;
  else if (t.metric === 'p50') value = r.product.p50 / r.floor.p50;
  else if (t.metric === 'objects') value = r.product.objectsPerSecond / r.floor.objectsPerSecond;
  else if (t.metric === 'vsStrong') {
    const strong = results.find((s) => s.name === 'members-three-strong');
    if (!strong) return { value: undefined, met: undefined };
    value = strong.product.p50 / r.product.p50;
  }
  // A latency bound of its own besides the ratio (geo-nearest-10: under 10 ms). A side that
  // answered errors (e.g. 429 past EXPENSIVE_READS_PER_CALLER) measured its errors: never met.
  const failed = [r.product, r.floor].some((side) => side.errors || side.non2xx);
  const met = !failed && (t.min !== undefined ? value >= t.min : value <= t.max) && (t.maxMs === undefined || r.product.p50 < t.maxMs);
  return { value, met, failed };
}

function table(run) {
  const rows = [
    '| Scenario | Product req/s | p50 ms | p99 ms | Floor req/s | p50 ms | p99 ms | Throughput ratio | p50 ratio | Node CPU µs/req, product / floor | Target | Measured | Met |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|:-:|',
  ];
  for (const r of run.results) {
    const { value, met, failed } = judge(r, run.results);
    const p = r.product;
    const f = r.floor;
    const thr = r.name === 'ingest' ? `${n0(p.objectsPerSecond)} obj/s` : n0(p.requestsPerSecond);
    const fthr = r.name === 'ingest' ? `${n0(f.objectsPerSecond)} obj/s` : n0(f.requestsPerSecond);
    const ratio = r.name === 'ingest' ? p.objectsPerSecond / f.objectsPerSecond : p.requestsPerSecond / f.requestsPerSecond;
    rows.push(
      `| ${r.title} | ${thr} | ${ms(p.p50)} | ${ms(p.p99)} | ${fthr} | ${ms(f.p50)} | ${ms(f.p99)} | ${x(ratio)} | ${x(p.p50 / f.p50)} | ${cpu(p, f)} | ${r.target?.label ?? ''} | ${value === undefined ? '' : x(value)} | ${met === undefined ? '' : met ? 'yes' : failed ? '**no: errors**' : '**no**'} |`,
    );
  }
  return rows.join('\n');
}

/** Scenarios compared with another scenario of the same run (ordered pages against unordered ones, as-of reads against the present). */
function versus(run) {
  const pairs = run.results.filter((r) => r.target?.vs && run.results.some((o) => o.name === r.target.vs));
  if (!pairs.length) return [];
  const rows = ['| Scenario | p50 ms | Compared with | p50 ms | Ratio |', '|---|--:|---|--:|--:|'];
  for (const r of pairs) {
    const o = run.results.find((x) => x.name === r.target.vs);
    rows.push(`| ${r.title} | ${ms(r.product.p50)} | ${o.title} | ${ms(o.product.p50)} | ${x(r.product.p50 / o.product.p50)} |`);
  }
  return ['Scenarios against the one they are held to (ordered pages against unordered ones; reads as of an instant against the same read of the present), product p50:', '', ...rows, ''];
}

export function renderMarkdown(report) {
  const { main, compare, machine } = report;
  const out = [
    `# Benchmark results`,
    '',
    `${report.date.slice(0, 16).replace('T', ' ')} UTC · ${machine.cpus} × ${machine.cpu} · ${machine.memoryGiB} GiB · Node ${machine.node} · PostgreSQL ${main.database.version}`,
    '',
    `Command: \`${report.command}\`. Each request scenario: ${report.settings.duration} s with autocannon after a 2 s warm-up, ` +
      `measured in five slices alternating between product and floor (one slice for the multi-second three-level STRONG read), ` +
      `${report.settings.connections} connections unless the table says otherwise (bulk: 4; members STRONG: 1, so that p50 is the read and not a queue behind another multi-second read on 2 cores); product and floor get the same seeded request sequence ` +
      `and their answers to the first request are checked to be the same data; before the scenarios the data set is read into memory with pg_prewarm ` +
      `(tables and indexes into the page cache, indexes and current objects into shared buffers), so neither pays the disk reads that warm the cache for the other. Scans and ingest are timed loops (p50/p99 of whole scans, of ingest batches). ` +
      `Node CPU µs/req is the user + system CPU of the serving Node processes (both apps for the product, the floor's one) per request during the measured run: ` +
      `unlike latency it does not depend on what else the machine runs, so it shows what the framework costs per request.`,
    '',
    `## ${n0(main.objects)} objects`,
    '',
    `${n0(main.database.objects)} objects, ${n0(main.database.versions)} versions, ${n0(main.database.property_values)} property values, ${n0(main.database.links)} links.`,
    '',
    table(main),
    '',
    ...versus(main),
  ];
  if (compare) {
    out.push(`## Scale: ${n0(compare.objects)} → ${n0(main.objects)} objects`, '');
    out.push(`| Scenario | p50 ms at ${n0(compare.objects)} | p50 ms at ${n0(main.objects)} | Growth | Floor growth | Target | Met |`, '|---|--:|--:|--:|--:|---|:-:|');
    for (const s of compare.results) {
      const big = main.results.find((r) => r.name === s.name);
      if (!big) continue;
      const growth = big.product.p50 / s.product.p50;
      out.push(
        `| ${s.title} | ${ms(s.product.p50)} | ${ms(big.product.p50)} | ${x(growth)} | ${x(big.floor.p50 / s.floor.p50)} | ≤ 1.3× | ${growth <= 1.3 ? 'yes' : '**no**'} |`,
      );
    }
    out.push('', `### ${n0(compare.objects)} objects, selective scenarios`, '', table(compare), '');
  }
  return out.join('\n') + '\n';
}
