import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ts from 'typescript';
import { generate, OntologyVersion, RUNTIME_PACKAGE, RUNTIME_VERSION } from '../../libs/client/src/generator/generate';
import { esmExports, ROOT } from '../support/npm-start';

/**
 * The SDK generator (libs/client/src/generator) on the demo ontology that `npm start` loads, and
 * the types of what it makes: test/sdk/typecheck.mts, compiled by tsc beside a freshly generated
 * SDK, must compile except for each line marked @ts-expect-error, each of which must fail (tsc
 * reports an unused @ts-expect-error as an error of its own).
 */
const { DEMO_ONTOLOGY } = esmExports<{ DEMO_ONTOLOGY: Omit<OntologyVersion, 'version'> }>('scripts/lib/demo-data.mjs', ['DEMO_ONTOLOGY']);
const DEMO: OntologyVersion = { version: 1, ...DEMO_ONTOLOGY };

describe('the SDK generator', () => {
  it('writes a package per ontology: the ontology as data, an interface per object type, its package.json and README', () => {
    const files = generate(DEMO, { packageName: 'demo-sdk' });
    expect(Object.keys(files).sort()).toEqual(['README.md', 'index.d.ts', 'index.js', 'package.json']);
    const pkg = JSON.parse(files['package.json']);
    expect(pkg).toMatchObject({
      name: 'demo-sdk',
      version: '1.0.0',
      type: 'module',
      exports: { '.': { types: './index.d.ts', default: './index.js' } },
    });
    expect(pkg.dependencies).toEqual({ [RUNTIME_PACKAGE]: `^${RUNTIME_VERSION}` });
    expect(RUNTIME_VERSION).toBe(JSON.parse(readFileSync(join(ROOT, 'libs/client/package.json'), 'utf8')).version);
    expect(files['index.js']).toContain(`import { createOntologyClient } from '${RUNTIME_PACKAGE}/sdk';`);
    expect(files['index.d.ts']).toContain('export interface Person extends ObjectBase {');
    expect(files['index.d.ts']).toContain('  email: string[];');
    expect(files['index.d.ts']).toContain('  age?: number;');
    expect(files['index.d.ts']).toContain(
      `readonly $link: { readonly knows: ObjectSet<Ontology, "person">; readonly memberOf: ObjectSet<Ontology, "project">; readonly worksFor: ObjectSet<Ontology, "company"> };`,
    );
    expect(files['README.md']).toContain('Object types: `company` (Company), `person` (Person), `project` (Project), `site` (Site).');
    // The same ontology, the same files.
    expect(generate(JSON.parse(JSON.stringify(DEMO)), { packageName: 'demo-sdk' })).toEqual(files);
  });

  it('names interfaces after object type ids, quotes ids that are not identifiers, and refuses ids it cannot use', () => {
    const odd: OntologyVersion = {
      version: 3,
      objectTypes: [
        { id: 'sensor-reading', properties: [{ id: 'value (raw)', type: 'double' }] },
        { id: 'sensor_reading', properties: [] },
        { id: 'client', properties: [] },
        { id: '3d-model', properties: [] },
      ],
      linkTypes: [{ id: 'reads from', sourceType: 'sensor-reading', targetType: 'client' }],
    };
    const dts = generate(odd)['index.d.ts'];
    expect(dts).toContain('export interface SensorReading extends ObjectBase {');
    expect(dts).toContain('export interface SensorReading2 extends ObjectBase {');
    expect(dts).toContain('export interface ClientObject extends ObjectBase {');
    expect(dts).toContain('export interface T3dModel extends ObjectBase {');
    expect(dts).toContain('  "value (raw)"?: number;');
    expect(dts).toContain('readonly $links: { "reads from": string[] };');
    expect(() => generate({ ...odd, objectTypes: [{ id: 'x', properties: [{ id: '$id', type: 'string' }] }] })).toThrow(
      "cannot generate an SDK: property 'x.$id': ids starting with '$' are the SDK's own",
    );
    expect(() => generate({ version: 0, objectTypes: [], linkTypes: [] })).toThrow(
      'the service has no ontology yet (version 0): publish one first (PUT /ontology)',
    );
  });
});

describe('the types of the SDK generated for the demo ontology', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'sdk-types-'));
    mkdirSync(join(dir, 'demo-sdk'));
    for (const [name, text] of Object.entries(generate(DEMO, { packageName: 'demo-sdk' })))
      writeFileSync(join(dir, 'demo-sdk', name), text);
    copyFileSync(join(ROOT, 'test/client/sdk/typecheck.mts'), join(dir, 'typecheck.mts'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('compile where used right and fail to compile at every misuse', () => {
    const program = ts.createProgram([join(dir, 'typecheck.mts')], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
      types: [],
      skipLibCheck: true,
      // The runtime's own sources: its types as the built package's .d.ts declare them.
      paths: { [`${RUNTIME_PACKAGE}/sdk`]: [join(ROOT, 'libs/client/src/sdk/index.ts')] },
    });
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => {
      const where = d.file
        ? `${d.file.fileName.replace(dir, '').replace(ROOT, '')}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}`
        : '';
      return `${where} TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
    });
    expect(diagnostics).toEqual([]);
    const source = readFileSync(join(dir, 'typecheck.mts'), 'utf8');
    expect(source.match(/\/\/ @ts-expect-error /g)?.length).toBeGreaterThanOrEqual(35);
    expect(source.match(/same</g)?.length).toBeGreaterThanOrEqual(20);
  });
});
