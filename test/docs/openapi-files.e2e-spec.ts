import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual, promisify } from 'node:util';
import { objectsOpenApiDocument } from '../../apps/objects/src/create-app';
import { objectSetsOpenApiDocument } from '../../apps/object-sets/src/create-app';
import { responseFault } from '../support/openapi-responses';
import { ROOT } from '../support/paths';

/**
 * The committed OpenAPI files (openapi/*.json, written by `npm run openapi`) and the typed
 * client's types made from them: current, and clean under `redocly lint`. No database: the
 * documents come from the apps' modules in Nest's preview mode.
 */

const root = ROOT;
const run = promisify(execFile);
const committed = (path: string) => readFileSync(join(root, path), 'utf8');
const STALE = 'stale: run `npm run openapi` and commit openapi/';

describe('OpenAPI files', () => {
  it.each([
    ['openapi/objects.json', objectsOpenApiDocument],
    ['openapi/object-sets.json', objectSetsOpenApiDocument],
  ])('%s is what the sources make', async (path, make) => {
    // The same document as the running app serves (configureApp). Compared as JSON values: key
    // order may differ between this compile (ts-jest) and `nest build`'s.
    const made = JSON.parse(JSON.stringify(await make())) as { servers: unknown };
    expect({ path, current: isDeepStrictEqual(made, JSON.parse(committed(path))) || STALE }).toEqual({ path, current: true });
    expect(made.servers).toEqual([{ url: '/', description: expect.any(String) }]);
  });

  it('are valid OpenAPI with no error or warning from redocly lint (recommended rules, redocly.yaml)', async () => {
    const cli = join(root, 'node_modules/@redocly/cli/bin/cli.js');
    const { stdout, stderr } = await run(
      process.execPath,
      [cli, 'lint', '--format=stylish', 'openapi/objects.json', 'openapi/object-sets.json'],
      { cwd: root },
    ).catch((e: { stdout: string; stderr: string }) => e);
    const output = `${stdout}\n${stderr}`;
    expect(output).toContain('Your API descriptions are valid');
    // A problem reads `<line>:<column>  error|warning  <rule>`; a clean run says only that it is valid.
    expect(output).not.toMatch(/\d+:\d+\s+(error|warning)\b|Validation failed|with \d+ warning/i);
  }, 60_000);

  it('make the typed client types that openapi/*.d.ts holds', async () => {
    const result = await run(process.execPath, [join(root, 'scripts/openapi.mjs'), '--check'], { cwd: root }).then(
      () => 'current',
      (e: { stderr: string }) => e.stderr,
    );
    expect(result).toBe('current');
  }, 60_000);

  it('list every error an operation can answer, as Conjure errors, and type every body', () => {
    for (const path of ['openapi/objects.json', 'openapi/object-sets.json']) {
      const doc = JSON.parse(committed(path)) as {
        paths: Record<
          string,
          Record<string, { operationId: string; responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>
        >;
      };
      for (const item of Object.values(doc.paths)) {
        for (const op of Object.values(item)) {
          const statuses = Object.keys(op.responses);
          expect({ op: op.operationId, statuses }).toEqual({
            op: op.operationId,
            statuses: expect.arrayContaining(['400', '401', '500', '503']),
          });
          for (const status of statuses.filter((s) => Number(s) >= 400)) {
            expect(JSON.stringify(op.responses[status].content?.['application/json'].schema)).toContain(
              '#/components/schemas/SerializableError',
            );
          }
        }
      }
      const types = committed(path.replace('.json', '.d.ts'));
      // No loose body anywhere: `unknown` appears only in the response headers' index signature.
      expect(
        types
          .split('\n')
          .filter(
            (l) =>
              /\bunknown\b/.test(l) && !/\[name: string\]: unknown;/.test(l) && !l.trim().startsWith('*') && !l.trim().startsWith('/**'),
          ),
      ).toEqual([]);
    }
  });
});

describe("the e2e tests' check of every response against the OpenAPI files (test/support/openapi-responses.ts)", () => {
  const res = (status: number, body: unknown) =>
    ({ status, body, text: JSON.stringify(body), headers: { 'content-type': 'application/json; charset=utf-8' } }) as unknown as Parameters<
      typeof responseFault
    >[3];
  const object = {
    id: 'p-1',
    type: 'person',
    environmentId: 'prod',
    metadata: { firstSighting: '2026-01-01T00:00:00.000Z', lastSighting: '2026-01-01T00:00:00.000Z' },
    properties: [{ id: 'name', value: 'Ada', origin: 'crm' }],
    links: {},
    tags: [],
  };
  const error = (errorName: string, errorCode: string) => ({
    errorCode,
    errorName,
    errorInstanceId: '3fa85f64-5717-4562-b3fc-2c963f66afa6',
    parameters: { objectId: 'p-1' },
  });

  it('accepts what an operation declares', () => {
    expect(responseFault('objects', 'get', '/objects/p-1?environmentId=prod', res(200, object))).toBeUndefined();
    expect(responseFault('objects', 'GET', '/objects/p-1', res(404, error('ObjectNotFound', 'NOT_FOUND')))).toBeUndefined();
    expect(responseFault('objects', 'GET', '/health/ready', res(418, 'not described'))).toBeUndefined();
  });

  it('refuses an undeclared status, a body of the wrong shape and an error the status does not list', () => {
    expect(responseFault('objects', 'GET', '/objects/p-1', res(202, object))).toMatch(
      /answered 202, which its OpenAPI operation does not declare/,
    );
    expect(
      responseFault('objects', 'GET', '/objects/p-1', res(200, { ...object, properties: [{ id: 'name', value: null, origin: 'crm' }] })),
    ).toMatch(/body its OpenAPI schema does not allow/);
    expect(responseFault('objects', 'GET', '/objects/p-1', res(200, { ...object, extra: 1, tags: undefined }))).toMatch(/tags/);
    expect(responseFault('objects', 'GET', '/objects/p-1', res(200, { ...object, extra: 1 }))).toMatch(
      /must NOT have additional properties/,
    );
    expect(responseFault('objects', 'GET', '/objects/p-1', res(404, error('ObjectSetNotFound', 'NOT_FOUND')))).toMatch(/errorName/);
    expect(responseFault('object-sets', 'DELETE', '/object-sets/x', res(409, error('VersionConflict', 'CONFLICT')))).toMatch(/errorName/);
  });
});
