// The live-sets benchmark's object sets and writes (bench/live-sets.mjs), over the synthetic
// data set (lib/dataset.mjs). Everything is bounded by the "hot" objects (serial < H, H =
// min(N, --hot)): the sets draw their members from them (but for a few that span the whole data
// set) and the writes change them, so the work per write is the same at 100k and at 1M objects.
//
// The hot objects are cut into 10 windows of consecutive serials; every (type, environment) has
// H / 200 objects in each window. Writes change `score` (every write: uniform in [0, 100)),
// `region` (20 %), `active` (10 %), the tag `priority` (5 %) and one link's target (10 %), so
// that filter sets gain, lose and update members and link traversals move their targets.
import { LINKS, TYPES, idOf, indexOf, objectAt } from './dataset.mjs';
import { prng } from './measure.mjs';

export const WINDOWS = 10;
const REGIONS = ['north', 'south', 'east', 'west', 'central', 'coastal', 'alpine', 'delta', 'highland', 'lowland', 'island', 'metro'];

const f = (type, payload) => ({ type, [type]: payload });
const F = {
  and: (...filters) => f('and', { filters }),
  or: (...filters) => f('or', { filters }),
  not: (filter) => f('not', { filter }),
  type: (...types) => f('objectType', { types }),
  range: (propertyId, bounds) => f('propertyRange', { propertyId, ...bounds }),
  equals: (propertyId, value) => f('propertyEquals', { propertyId, value }),
  in: (propertyId, values) => f('propertyIn', { propertyId, values }),
  tag: (...tags) => f('tag', { tags }),
  linkedFrom: (linkId, source) => f('linkedFrom', { linkId, source }),
  linksTo: (linkId, target) => f('linksTo', { linkId, target }),
};

/** The hot population: serial < hot, in WINDOWS windows of `width` serials (a multiple of 20). */
export function hotRange(n, hot) {
  const width = Math.max(20, Math.floor(Math.min(n, hot) / WINDOWS / 20) * 20);
  return { hot: width * WINDOWS, width };
}

/**
 * The set definitions, in creation order (a set only names sets before it). Each is
 * `{ key, kind, title, definition, links }`; `definition` names other sets by key
 * (`{ ref: key }`), resolved to ids at creation; `links`: the set follows links (its members
 * need not be among the objects written at the instant of its event). `count` sets in all (100
 * by default; fewer or more repeat the pattern).
 */
export function liveSetDefinitions(n, hot, count = 100, exclude = []) {
  const { width } = hotRange(n, hot);
  const win = (k) => F.range('serial', { gte: (k % WINDOWS) * width, lt: ((k % WINDOWS) + 1) * width });
  const T = (k) => TYPES[k % 5];
  const plural = (t) => (t === 'company' ? 'companies' : `${t}s`);
  const defs = [];
  const filter = (key, title, filterDef, links = false) => defs.push({ key, kind: links ? 'filter with link hops' : 'filter', title, links, definition: { type: 'filter', filter: { filter: filterDef } } });
  const op = (key, title, operator, refs, links) => defs.push({ key, kind: 'set algebra', title, links, definition: { type: 'operation', operation: { operator, objectSetIds: refs.map((ref) => ({ ref })) } } });
  const extract = (key, title, linkId, ref) => defs.push({ key, kind: 'link traversal', title, links: true, definition: { type: 'linkOperation', linkOperation: { operator: 'EXTRACT_TARGET', linkId, objectSetId: { ref } } } });

  // Filter sets (50).
  for (let k = 0; k < 10; k++) filter(`A${k}`, `${plural(T(k))} in window ${k}`, F.and(F.type(T(k)), win(k)));
  for (let k = 0; k < 10; k++) {
    const lo = (k * 7) % 70;
    filter(`B${k}`, `window ${k}, score in [${lo}, ${lo + 30})`, F.and(win(k), F.range('score', { gte: lo, lt: lo + 30 })));
  }
  for (let k = 0; k < 10; k++) {
    const regions = [REGIONS[k % 12], REGIONS[(k + 5) % 12]];
    filter(`C${k}`, `${plural(T(k + 1))} in window ${k}, region ${regions.join(' or ')}`, F.and(F.type(T(k + 1)), win(k), F.in('region', regions)));
  }
  for (let k = 0; k < 5; k++) filter(`D${k}`, `windows ${2 * k}–${2 * k + 1}, inactive`, F.and(F.range('serial', { gte: 2 * k * width, lt: (2 * k + 2) * width }), F.equals('active', false)));
  for (let k = 0; k < 5; k++) filter(`E${k}`, `every ${T(k)} with score ≥ 99 (whole data set)`, F.and(F.type(T(k)), F.range('score', { gte: 99 })));
  for (let k = 0; k < 5; k++) filter(`F${k}`, `window ${k + 5}, tagged priority`, F.and(win(k + 5), F.tag('priority')));
  for (let k = 0; k < 5; k++) {
    filter(`G${k}`, `window ${k}: (region ${REGIONS[k + 2]} or score < 10), and not inactive`, F.and(win(k), F.or(F.equals('region', REGIONS[k + 2]), F.range('score', { lt: 10 })), F.not(F.equals('active', false))));
  }
  // Link traversals (20): EXTRACT_TARGET over the window sets, and filters with linkedFrom / linksTo.
  for (let k = 0; k < 10; k++) {
    const [linkId] = LINKS[T(k)][k < 5 ? 0 : 1];
    extract(`H${k}`, `targets of ${linkId} from ${plural(T(k))} in window ${k}`, linkId, `A${k}`);
  }
  for (let k = 0; k < 5; k++) {
    filter(`I${k}`, `companies that persons in window ${k} with score ≥ 80 work for`, F.and(F.type('company'), F.linkedFrom('worksFor', F.and(F.type('person'), win(k), F.range('score', { gte: 80 })))), true);
  }
  for (let k = 0; k < 5; k++) {
    filter(`J${k}`, `persons in window ${k + 5} living at a site of region ${REGIONS[k]} or ${REGIONS[k + 6]}`, F.and(F.type('person'), win(k + 5), F.linksTo('livesAt', F.in('region', [REGIONS[k], REGIONS[k + 6]]))), true);
  }
  // Set algebra (20).
  for (let k = 0; k < 7; k++) op(`K${k}`, `B${k} ∪ C${k}`, 'UNION', [`B${k}`, `C${k}`], false);
  for (let k = 0; k < 7; k++) op(`L${k}`, `A${k} ∩ B${k}`, 'INTERSECTION', [`A${k}`, `B${k}`], false);
  for (let k = 0; k < 6; k++) op(`M${k}`, `A${k + 3} − B${k + 3}`, 'DIFFERENCE', [`A${k + 3}`, `B${k + 3}`], false);
  // Nested (10): link traversals over set algebra, and algebra over those.
  for (let k = 0; k < 5; k++) {
    const [linkId] = LINKS[T(k)][1];
    extract(`N${k}`, `targets of ${linkId} from L${k} (A${k} ∩ B${k})`, linkId, `L${k}`);
  }
  for (let k = 0; k < 3; k++) op(`O${k}`, `N${k} ∪ H${k} ∪ I${k}`, 'UNION', [`N${k}`, `H${k}`, `I${k}`], true);
  for (let k = 0; k < 2; k++) op(`P${k}`, `K${k} − D${k} − G${k}`, 'DIFFERENCE', [`K${k}`, `D${k}`, `G${k}`], false);
  // Left out: the sets named (a key, or a group's letter), and every set built on one of them.
  const out = new Set();
  const named = (key) => exclude.some((e) => e === key || (/^[A-Z]$/.test(e) && key.startsWith(e) && /^\d+$/.test(key.slice(e.length))));
  for (const d of defs) {
    const refs = [];
    JSON.stringify(d.definition, (_k, v) => (v && typeof v === 'object' && 'ref' in v && refs.push(v.ref), v));
    if (named(d.key) || refs.some((r) => out.has(r))) out.add(d.key);
  }
  const kept = defs.filter((d) => !out.has(d.key));
  if (count <= kept.length) return kept.slice(0, count);
  // More sets than the pattern (or some left out): filter sets over further score slices of the windows.
  for (let j = 0; kept.length < count; j++) {
    const k = j % WINDOWS;
    const lo = (j * 13) % 90;
    kept.push({ key: `X${j}`, kind: 'filter', title: `window ${k}, score in [${lo}, ${lo + 10})`, links: false, definition: { type: 'filter', filter: { filter: F.and(win(k), F.range('score', { gte: lo, lt: lo + 10 })) } } });
  }
  return kept;
}

/** `definition` with every `{ ref: key }` replaced by the id of that set. */
export function resolveRefs(definition, ids) {
  return JSON.parse(JSON.stringify(definition), (_k, v) => {
    if (v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 1 && 'ref' in v) {
      const id = ids.get(v.ref);
      if (!id) throw new Error(`set ${v.ref} is referenced before it was created`);
      return id;
    }
    return v;
  });
}

/**
 * The writes: objects of the hot range with changed values, from a seeded PRNG. Keeps the state
 * it wrote per object, so that a later write changes it further (and `restore` writes the data
 * set's own values back: objectAt(i, last pass)).
 */
export class LiveWrites {
  constructor(n, hot, { seed = 42, lastPass = 2, exclude = [] } = {}) {
    this.n = n;
    this.hot = hotRange(n, hot).hot;
    this.lastPass = lastPass;
    this.random = prng(seed);
    /** Indexes `pick` never chooses (the sentinel object). */
    this.exclude = new Set(exclude);
    /** index → { score, region?, active?, priority?, link? } as last written. */
    this.state = new Map();
  }

  /** `count` distinct hot object indexes, none in `busy` (objects of batches still in flight). */
  pick(count, busy) {
    const picked = new Set();
    for (let guard = 0; picked.size < count && guard < count * 50; guard++) {
      const i = Math.floor(this.random() * this.hot);
      if (!busy?.has(i) && !this.exclude.has(i)) picked.add(i);
    }
    return [...picked];
  }

  /** The object to write for index i: its generated values with this write's changes on top. */
  next(i) {
    const r = this.random;
    const s = { ...(this.state.get(i) ?? {}) };
    s.score = Math.floor(r() * 100_000) / 1000;
    if (r() < 0.2) s.region = REGIONS[Math.floor(r() * 12)];
    if (r() < 0.1) s.active = !(s.active ?? this.base(i).properties.find((p) => p.id === 'active').value);
    if (r() < 0.05) s.priority = !(s.priority ?? this.base(i).tags.includes('priority'));
    if (r() < 0.1) {
      const type = TYPES[Math.floor(i / 4) % 5];
      const k = r() < 0.5 ? 0 : 1;
      const [linkId, targetType] = LINKS[type][k];
      const perGroup = this.n / 20;
      s.link = { linkId, target: indexOf(i % 4, targetType, Math.floor(r() * perGroup)) };
    }
    this.state.set(i, s);
    return this.render(i, s);
  }

  base(i) {
    return objectAt(i, this.lastPass, this.n);
  }

  render(i, s) {
    const o = this.base(i);
    o.properties = o.properties.map((p) => {
      if (p.id === 'score') return { ...p, value: s.score };
      if (p.id === 'region' && s.region !== undefined) return { ...p, value: s.region };
      if (p.id === 'active' && s.active !== undefined) return { ...p, value: s.active };
      return p;
    });
    if (s.priority !== undefined) {
      const tags = new Set(o.tags);
      if (s.priority) tags.add('priority');
      else tags.delete('priority');
      o.tags = [...tags].sort();
    }
    if (s.link) o.links = { ...o.links, [s.link.linkId]: [idOf(s.link.target)] };
    return o;
  }

  /** The objects that bring every object written back to the data set's values. */
  restoreObjects() {
    return [...this.state.keys()].map((i) => this.base(i));
  }
}
