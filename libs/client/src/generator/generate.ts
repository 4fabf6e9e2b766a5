/**
 * The SDK generator (docs/sdk.md): an ontology (GET /ontology, docs/api.md §6) in, the files of a
 * small ES module package out: `index.js` (the ontology as data, and `createClient`), `index.d.ts`
 * (an interface per object type, its properties typed by property type, multi-valued ones as
 * arrays, its links typed by their target types, and the `Ontology` type the runtime derives
 * filters, orderings and aggregations from), `package.json` and `README.md`. Pure: the same
 * ontology always gives the same files.
 */
import type { ObjectsSchemas } from '../index.js';

export type OntologyVersion = ObjectsSchemas['OntologyVersion'];

export interface GenerateOptions {
  /** The generated package's name (default `ontology-sdk`). */
  packageName?: string;
  /** The version range of this package the generated one depends on (default `^<this version>`). */
  runtime?: string;
  /** Where the ontology was read, for the README. */
  source?: string;
}

/** The runtime package the generated one imports. */
export const RUNTIME_PACKAGE = '@ontology-object-service/client';
/** This package's version, as package.json says (checked by test/client/sdk-types.spec.ts). */
export const RUNTIME_VERSION = '0.1.0';

const TS_TYPE: Record<ObjectsSchemas['PropertyDefinition']['type'], string> = {
  string: 'string',
  long: 'number',
  double: 'number',
  boolean: 'boolean',
  date: 'string',
  timestamp: 'string',
  geopoint: 'GeoPoint',
};
const TYPE_NOTE: Record<ObjectsSchemas['PropertyDefinition']['type'], string> = {
  string: 'string',
  long: 'long (an integer within ±(2^53 − 1))',
  double: 'double',
  boolean: 'boolean',
  date: 'date (YYYY-MM-DD)',
  timestamp: 'timestamp (RFC 3339, UTC with milliseconds)',
  geopoint: 'geopoint ({lat, lon})',
};
/** Names the generated module exports besides the object types' interfaces. */
const EXPORTED = new Set(['Ontology', 'Client', 'ontology', 'createClient', 'GeoPoint', 'ObjectSet', 'OntologyClient', 'SdkClientOptions']);
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** A property key of a type literal: bare when it can be, quoted otherwise. */
const key = (id: string) => (IDENTIFIER.test(id) ? id : JSON.stringify(id));
/** A type literal of these members. */
const braces = (members: string[]) => (members.length ? `{ ${members.join('; ')} }` : '{}');
/** A doc comment's text, safe inside `/** … *\/`. */
const doc = (text: string) => text.replace(/\*\//g, '*\\/');

/** The interface name of an object type: PascalCase of its id, unique, not one of the module's other exports. */
function interfaceNames(typeIds: string[]): Map<string, string> {
  const names = new Map<string, string>();
  const taken = new Set(EXPORTED);
  for (const id of typeIds) {
    const words = id.split(/[^A-Za-z0-9]+/).filter(Boolean);
    let base = words.map((w) => w[0].toUpperCase() + w.slice(1)).join('') || 'ObjectType';
    if (/^[0-9]/.test(base)) base = `T${base}`;
    if (EXPORTED.has(base)) base = `${base}Object`;
    let name = base;
    for (let n = 2; taken.has(name); n++) name = `${base}${n}`;
    taken.add(name);
    names.set(id, name);
  }
  return names;
}

/** Why the SDK cannot be generated for this ontology, or undefined. */
function fault(ontology: OntologyVersion): string | undefined {
  if (ontology.version === 0 || ontology.objectTypes.length === 0)
    return 'the service has no ontology yet (version 0): publish one first (PUT /ontology)';
  // `$…` keys are the SDK's (attributes, operators); `__proto__` would be an object's prototype.
  const reserved = (id: string) =>
    id.startsWith('$')
      ? "ids starting with '$' are the SDK's own"
      : id === '__proto__'
        ? "'__proto__' cannot be a key of a JavaScript object"
        : undefined;
  for (const t of ontology.objectTypes) {
    if (reserved(t.id)) return `object type '${t.id}': ${reserved(t.id)}`;
    for (const p of t.properties) if (reserved(p.id)) return `property '${t.id}.${p.id}': ${reserved(p.id)}`;
  }
  for (const l of ontology.linkTypes) if (reserved(l.id)) return `link type '${l.id}': ${reserved(l.id)}`;
  return undefined;
}

/** The files of the SDK package for `ontology`, by file name. */
export function generate(ontology: OntologyVersion, options: GenerateOptions = {}): Record<string, string> {
  const why = fault(ontology);
  if (why) throw new Error(`cannot generate an SDK: ${why}`);
  const packageName = options.packageName ?? 'ontology-sdk';
  const types = [...ontology.objectTypes].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const names = interfaceNames(types.map((t) => t.id));
  const linksFrom = (typeId: string) => ontology.linkTypes.filter((l) => l.sourceType === typeId).sort((a, b) => (a.id < b.id ? -1 : 1));
  const linksTo = (typeId: string) => ontology.linkTypes.filter((l) => l.targetType === typeId).sort((a, b) => (a.id < b.id ? -1 : 1));

  // --- index.js: the ontology as data --------------------------------------------------------
  const metadata = {
    version: ontology.version,
    objectTypes: Object.fromEntries(
      types.map((t) => [
        t.id,
        {
          properties: Object.fromEntries(t.properties.map((p) => [p.id, { type: p.type, multi: p.multi ?? false }])),
          links: Object.fromEntries(linksFrom(t.id).map((l) => [l.id, l.targetType])),
          linkedFrom: Object.fromEntries(linksTo(t.id).map((l) => [l.id, l.sourceType])),
        },
      ]),
    ),
  };
  const header = `// Generated by ontology-sdk (${RUNTIME_PACKAGE}) from ontology version ${ontology.version}: do not edit; generate again when the ontology changes.`;
  const js = `${header}
import { createOntologyClient } from '${RUNTIME_PACKAGE}/sdk';

/** The ontology this SDK was generated for (version ${ontology.version}). */
export const ontology = ${JSON.stringify(metadata, null, 2)};

/** A client of the service for this ontology: \`createClient({ baseUrl: 'http://localhost:8080' })\`. */
export function createClient(options) {
  return createOntologyClient(ontology, options);
}
`;

  // --- index.d.ts: the types -----------------------------------------------------------------
  const dts: string[] = [
    header,
    `import type { GeoPoint, ObjectBase, ObjectSet, OntologyClient, OntologyMetadata, SdkClientOptions } from '${RUNTIME_PACKAGE}/sdk';`,
    `export type { GeoPoint, ObjectSet, OntologyClient, SdkClientOptions } from '${RUNTIME_PACKAGE}/sdk';`,
    '',
  ];
  for (const t of types) {
    const name = names.get(t.id)!;
    const from = linksFrom(t.id);
    dts.push(`/** ${doc(t.displayName ?? t.id)}: object type \`${doc(t.id)}\`. */`);
    dts.push(`export interface ${name} extends ObjectBase {`);
    dts.push(`  readonly $type: ${JSON.stringify(t.id)};`);
    dts.push(`  /** Link id → the ids of its targets. */`);
    dts.push(`  readonly $links: ${braces(from.map((l) => `${key(l.id)}: string[]`))};`);
    dts.push(`  /** Link id → the set of its targets (of the target type, in this object's environment). */`);
    dts.push(
      `  readonly $link: ${braces(from.map((l) => `readonly ${key(l.id)}: ObjectSet<Ontology, ${JSON.stringify(l.targetType)}>`))};`,
    );
    for (const p of t.properties) {
      const multi = p.multi ?? false;
      dts.push(`  /** ${TYPE_NOTE[p.type]}${multi ? ', several values (none: [])' : ''} */`);
      dts.push(`  ${key(p.id)}${multi ? '' : '?'}: ${TS_TYPE[p.type]}${multi ? '[]' : ''};`);
    }
    dts.push('}', '');
  }
  dts.push(`/** The ontology (version ${ontology.version}) as the SDK runtime reads it: object type id → properties and links. */`);
  dts.push('export type Ontology = {');
  for (const t of types) {
    dts.push(`  ${key(t.id)}: {`);
    dts.push(`    object: ${names.get(t.id)};`);
    dts.push(
      `    properties: ${braces(t.properties.map((p) => `${key(p.id)}: { type: ${JSON.stringify(p.type)}; multi: ${p.multi ?? false} }`))};`,
    );
    const from = linksFrom(t.id);
    const to = linksTo(t.id);
    dts.push(`    links: ${braces(from.map((l) => `${key(l.id)}: ${JSON.stringify(l.targetType)}`))};`);
    dts.push(`    linkedFrom: ${braces(to.map((l) => `${key(l.id)}: ${JSON.stringify(l.sourceType)}`))};`);
    dts.push('  };');
  }
  dts.push('};', '');
  dts.push('export declare const ontology: OntologyMetadata;', '');
  dts.push(`/** A client of this ontology: \`sdk.${types[0].id}.where({ … }).fetchPage()\`, and \`$objectSet\`, \`$clients\`. */`);
  dts.push('export type Client = OntologyClient<Ontology>;', '');
  dts.push(`/** A client of the service for this ontology: \`createClient({ baseUrl: 'http://localhost:8080' })\`. */`);
  dts.push('export declare function createClient(options: SdkClientOptions): Client;', '');

  // --- package.json and README.md ------------------------------------------------------------
  const packageJson = {
    name: packageName,
    version: `${ontology.version}.0.0`,
    description: `Typed SDK of ontology version ${ontology.version} of an ontology object service, generated by ontology-sdk`,
    private: true,
    type: 'module',
    main: './index.js',
    types: './index.d.ts',
    exports: { '.': { types: './index.d.ts', default: './index.js' } },
    sideEffects: false,
    dependencies: { [RUNTIME_PACKAGE]: options.runtime ?? `^${RUNTIME_VERSION}` },
  };
  const example = types.find((t) => t.properties.length) ?? types[0];
  const readme = `# ${packageName}

A typed SDK of ontology version ${ontology.version}${options.source ? ` (read from ${options.source})` : ''}, generated by
\`ontology-sdk\` (${RUNTIME_PACKAGE}): do not edit, generate it again when the ontology changes.

\`\`\`ts
import { createClient } from '${packageName}';

const sdk = createClient({ baseUrl: 'http://localhost:8080' });
const page = await sdk.${IDENTIFIER.test(example.id) ? example.id : `[${JSON.stringify(example.id)}]`}.fetchPage({ pageSize: 10 });
\`\`\`

Object types: ${types.map((t) => `\`${t.id}\` (${names.get(t.id)})`).join(', ')}. Link types: ${ontology.linkTypes.length ? ontology.linkTypes.map((l) => `\`${l.id}\` (${l.sourceType} → ${l.targetType})`).join(', ') : 'none'}.
What a set offers (where, union, intersect, subtract, pivotTo, fetchPage, for await, aggregate, asOf, subscribe) is described
in docs/sdk.md of the ontology object service.
`;
  return {
    'package.json': `${JSON.stringify(packageJson, null, 2)}\n`,
    'index.js': js,
    'index.d.ts': dts.join('\n'),
    'README.md': readme,
  };
}
