import {
  InvalidObjectSetDefinition,
  ObjectSetNotFound,
  filterOf,
  MAX_LINK_HOPS,
  ObjectSearchFilter,
  ObjectSetDefinition,
} from '@app/domain';
import {
  compileObjectSet,
  MAX_EXPANDED_SET_LIST_ENTRIES,
  MAX_EXPANDED_SET_NODES,
  MAX_SET_NESTING,
  referencedSetIds,
  StoredSet,
} from './evaluator';
import { validateDefinition } from './definition.validator';

const NOTHING = filterOf('not', { filter: filterOf('all', {}) });
const vip = filterOf('tag', { tags: ['vip'] });

function sets(defs: Record<string, ObjectSetDefinition | [ObjectSetDefinition, string[]]>) {
  const map = new Map<string, StoredSet>();
  for (const [id, d] of Object.entries(defs)) {
    const [definition, scope] = Array.isArray(d) ? d : [d, []];
    map.set(id, { id, definition, scopeEnvironmentIds: scope });
  }
  return { compile: (id: string) => compileObjectSet(map.get(id)!, (ref) => map.get(ref)), map };
}

const filterDef = (filter: ObjectSearchFilter, startingSet?: string): ObjectSetDefinition => ({
  type: 'filter',
  filter: { filter, ...(startingSet ? { startingSet } : {}) },
});
const op = (operator: 'UNION' | 'INTERSECTION' | 'DIFFERENCE', ...objectSetIds: string[]): ObjectSetDefinition => ({
  type: 'operation',
  operation: { operator, objectSetIds },
});
const link = (linkId: string, objectSetId: string): ObjectSetDefinition => ({
  type: 'linkOperation',
  linkOperation: { operator: 'EXTRACT_TARGET', linkId, objectSetId },
});

describe('compileObjectSet', () => {
  it('empty → not(all)', () => {
    expect(sets({ a: { type: 'empty', empty: {} } }).compile('a')).toEqual(NOTHING);
  });

  it('stable → one and(environment, objectId) per environment, sorted, ids deduplicated; none → not(all)', () => {
    const { compile } = sets({
      a: {
        type: 'stable',
        stable: {
          objects: [
            { environmentId: 'prod', id: 'p-2' },
            { environmentId: 'dev', id: 'p-1' },
            { environmentId: 'prod', id: 'p-1' },
            { environmentId: 'prod', id: 'p-2' },
          ],
        },
      },
      b: { type: 'stable', stable: { objects: [{ environmentId: 'prod', id: 'x' }] } },
      c: { type: 'stable', stable: { objects: [] } },
    });
    expect(compile('a')).toEqual(
      filterOf('or', {
        filters: [
          filterOf('and', { filters: [filterOf('environment', { environmentIds: ['dev'] }), filterOf('objectId', { ids: ['p-1'] })] }),
          filterOf('and', {
            filters: [filterOf('environment', { environmentIds: ['prod'] }), filterOf('objectId', { ids: ['p-2', 'p-1'] })],
          }),
        ],
      }),
    );
    expect(compile('b')).toEqual(
      filterOf('and', { filters: [filterOf('environment', { environmentIds: ['prod'] }), filterOf('objectId', { ids: ['x'] })] }),
    );
    expect(compile('c')).toEqual(NOTHING);
  });

  it('filter → the filter, and its starting set when given', () => {
    const { compile } = sets({ a: filterDef(vip), b: filterDef(filterOf('all', {}), 'a') });
    expect(compile('a')).toEqual(vip);
    expect(compile('b')).toEqual(filterOf('and', { filters: [filterOf('all', {}), vip] }));
  });

  it('operation → or / and / and(first, not(or(rest))); one operand is itself', () => {
    const x = filterOf('tag', { tags: ['x'] });
    const y = filterOf('tag', { tags: ['y'] });
    const { compile } = sets({
      a: filterDef(vip),
      b: filterDef(x),
      c: filterDef(y),
      u: op('UNION', 'a', 'b'),
      i: op('INTERSECTION', 'a', 'b'),
      d: op('DIFFERENCE', 'a', 'b', 'c'),
      d2: op('DIFFERENCE', 'a', 'b'),
      one: op('INTERSECTION', 'c'),
    });
    expect(compile('u')).toEqual(filterOf('or', { filters: [vip, x] }));
    expect(compile('i')).toEqual(filterOf('and', { filters: [vip, x] }));
    expect(compile('d')).toEqual(filterOf('and', { filters: [vip, filterOf('not', { filter: filterOf('or', { filters: [x, y] }) })] }));
    expect(compile('d2')).toEqual(filterOf('and', { filters: [vip, filterOf('not', { filter: x })] }));
    expect(compile('one')).toEqual(y);
  });

  it('linkOperation EXTRACT_TARGET → linkedFrom', () => {
    const { compile } = sets({ a: filterDef(vip), l: link('worksFor', 'a') });
    expect(compile('l')).toEqual(filterOf('linkedFrom', { linkId: 'worksFor', source: vip }));
  });

  it("ands each set's own scope onto its own filter, also when referenced", () => {
    const { compile } = sets({ a: [filterDef(vip), ['prod']], u: [op('UNION', 'a'), []] });
    const scoped = filterOf('and', { filters: [vip, filterOf('environment', { environmentIds: ['prod'] })] });
    expect(compile('a')).toEqual(scoped);
    expect(compile('u')).toEqual(scoped);
  });

  it('compiles deep chains and shared (diamond) references, each set once', () => {
    const defs: Record<string, ObjectSetDefinition> = { s0: filterDef(vip) };
    for (let i = 1; i < 40; i++) defs[`s${i}`] = op('UNION', `s${i - 1}`);
    defs.top = link('knows', 's39');
    defs.left = op('UNION', 's0');
    defs.right = op('INTERSECTION', 's0');
    defs.diamond = op('UNION', 'left', 'right');
    const { map } = sets(defs);
    const resolved: string[] = [];
    const compile = (id: string) => compileObjectSet(map.get(id)!, (ref) => (resolved.push(ref), map.get(ref)));
    expect(compile('top')).toEqual(filterOf('linkedFrom', { linkId: 'knows', source: vip }));
    resolved.length = 0;
    expect(compile('diamond')).toEqual(filterOf('or', { filters: [vip, vip] }));
    // s0 is reached twice but resolved (and compiled) once per reference, never recompiled.
    expect(resolved.filter((r) => r === 's0')).toHaveLength(2);
  });

  it('detects cycles, direct and through a starting set, naming the path', () => {
    const { compile } = sets({ a: op('UNION', 'b'), b: op('UNION', 'c'), c: op('UNION', 'a'), s: filterDef(vip, 's') });
    expect(() => compile('a')).toThrow(InvalidObjectSetDefinition);
    try {
      compile('a');
    } catch (e) {
      expect((e as InvalidObjectSetDefinition).parameters.reason).toBe('reference cycle: a → b → c → a');
    }
    expect(() => compile('s')).toThrow(/reference cycle: s → s/);
  });

  it(`bounds nesting at ${MAX_SET_NESTING} levels`, () => {
    const defs: Record<string, ObjectSetDefinition> = { s0: filterDef(vip) };
    for (let i = 1; i <= MAX_SET_NESTING + 1; i++) defs[`s${i}`] = op('UNION', `s${i - 1}`);
    expect(() => sets(defs).compile(`s${MAX_SET_NESTING + 1}`)).toThrow(/nested more than/);
    expect(() => sets(defs).compile(`s${MAX_SET_NESTING - 1}`)).not.toThrow();
  });

  it('an unknown reference: InvalidObjectSetDefinition from the root, ObjectSetNotFound deeper', () => {
    const { compile } = sets({ a: op('UNION', 'gone'), b: op('UNION', 'a') });
    expect(() => compile('a')).toThrow(InvalidObjectSetDefinition);
    expect(() => compile('b')).toThrow(ObjectSetNotFound);
  });

  it('lists direct references', () => {
    expect(referencedSetIds(op('UNION', 'a', 'b', 'a'))).toEqual(['a', 'b']);
    expect(referencedSetIds(link('k', 'x'))).toEqual(['x']);
    expect(referencedSetIds(filterDef(vip, 'y'))).toEqual(['y']);
    expect(referencedSetIds(filterDef(vip))).toEqual([]);
    expect(referencedSetIds({ type: 'empty', empty: {} })).toEqual([]);
  });

  describe('bounds what a set expands to', () => {
    it('a set used many times counts each time: the blow-up of UNIONs of copies is refused at the first level past the bound', () => {
      // a: 3 nodes; b: 1,000 distinct sets of a → ~3,000 nodes, fine; c: 10 copies of b: ~30,000 > 20,000.
      const defs: Record<string, ObjectSetDefinition> = { a: filterDef(filterOf('and', { filters: [vip, filterOf('all', {})] })) };
      const ids = Array.from({ length: 1000 }, (_, i) => `a${i}`);
      for (const id of ids) defs[id] = op('UNION', 'a');
      defs.b = op('UNION', ...ids);
      defs.c = op('UNION', ...Array.from({ length: 10 }, (_, i) => `c${i}`));
      for (let i = 0; i < 10; i++) defs[`c${i}`] = op('INTERSECTION', 'b');
      defs.d = op('UNION', 'c', 'a');
      const { compile } = sets(defs);
      expect(() => compile('b')).not.toThrow();
      expect(() => compile('c')).toThrow(
        new RegExp(`the definition expands to 300\\d\\d filter nodes, more than the ${MAX_EXPANDED_SET_NODES}`),
      );
      expect(() => compile('d')).toThrow(/referenced object set c expands to/);
    });

    it('the list entries of all stable sets and filters together are bounded', () => {
      const objects = (n: number, p: string) => Array.from({ length: n }, (_, i) => ({ environmentId: 'prod', id: `${p}${i}` }));
      const { compile } = sets({
        x: { type: 'stable', stable: { objects: objects(100_000, 'x') } },
        y: { type: 'stable', stable: { objects: objects(100_000, 'y') } },
        z: { type: 'stable', stable: { objects: objects(100_000, 'z') } },
        xy: op('UNION', 'x', 'y'),
        xyz: op('UNION', 'xy', 'z'),
      });
      expect(() => compile('xy')).not.toThrow();
      expect(() => compile('xyz')).toThrow(new RegExp(`expands to 300003 list entries, more than the ${MAX_EXPANDED_SET_LIST_ENTRIES}`));
    });

    it(`link hops: a chain of ${MAX_LINK_HOPS} linkOperations compiles, one more is refused; the links of filters count with them, siblings do not`, () => {
      const defs: Record<string, ObjectSetDefinition> = { s0: filterDef(vip) };
      for (let i = 1; i <= 63; i++) defs[`s${i}`] = link('knows', `s${i - 1}`); // s<i>: i hops
      const twoHops = filterOf('linksTo', { linkId: 'knows', target: filterOf('linkedFrom', { linkId: 'knows', source: vip }) });
      defs.two = filterDef(twoHops);
      defs.twoOnSix = filterDef(twoHops, 's6'); // and(2 hops, 6 hops): 6
      defs.siblings = op('UNION', 's8', 'two', 'twoOnSix'); // 8
      defs.threeOnEight = filterDef(filterOf('linkedFrom', { linkId: 'knows', source: twoHops }), 's8'); // and(3, 8): 8
      defs.linkOnTwoOnSix = link('knows', 'twoOnSix'); // 7
      defs.linkOfLinkedFilter = link('knows', 'linkOnTwoOnSix'); // 8
      defs.nine = link('knows', 'threeOnEight'); // 9
      const { compile } = sets(defs);
      for (const id of [`s${MAX_LINK_HOPS}`, 'twoOnSix', 'siblings', 'threeOnEight', 'linkOfLinkedFilter'])
        expect(() => compile(id)).not.toThrow();
      const reason =
        'the definition follows 9 link hops, more than the 8 a set may follow (each linkOperation is one, and each linkedFrom or linksTo of its filters, along the longest chain of sets)';
      expect(() => compile(`s${MAX_LINK_HOPS + 1}`)).toThrow(new InvalidObjectSetDefinition('definition', reason));
      expect(() => compile('nine')).toThrow(new InvalidObjectSetDefinition('definition', reason));
      expect(() => compile('s63')).toThrow(/^InvalidObjectSetDefinition: .*referenced object set s9 follows 9 link hops/);
      // A filter definition's own links: nine of them in one filter.
      let nineInAFilter: ObjectSearchFilter = vip;
      for (let i = 0; i < 9; i++) nineInAFilter = filterOf('linkedFrom', { linkId: 'knows', source: nineInAFilter });
      expect(() => sets({ f: filterDef(nineInAFilter) }).compile('f')).toThrow(/the definition follows 9 link hops/);
    });

    it('duplicate operands are removed when a definition is read (DIFFERENCE keeps its first operand)', () => {
      const ids = Array.from({ length: 998 }, () => 'a');
      expect(validateDefinition({ type: 'operation', operation: { operator: 'UNION', objectSetIds: [...ids, 'b', 'a'] } })).toEqual(
        op('UNION', 'a', 'b'),
      );
      expect(validateDefinition({ type: 'operation', operation: { operator: 'INTERSECTION', objectSetIds: ['b', 'a', 'b'] } })).toEqual(
        op('INTERSECTION', 'b', 'a'),
      );
      expect(validateDefinition({ type: 'operation', operation: { operator: 'DIFFERENCE', objectSetIds: ['a', 'b', 'a', 'b'] } })).toEqual(
        op('DIFFERENCE', 'a', 'b', 'a'),
      );
    });
  });
});
