/**
 * `ontology-sdk --url <base URL> --out <directory>` (also `npm run sdk -- …` in the repository):
 * reads the active ontology from a running service and writes the SDK package for it (generate.ts).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { basename, join, relative, resolve, sep } from 'node:path';
import { parseArgs } from 'node:util';
import { createObjectsClient, isConjureError, unwrap } from '../index.js';
import { generate } from './generate.js';

const USAGE = `Usage: ontology-sdk --url <base URL> --out <directory> [options]

Reads the active ontology (GET <base URL>/ontology, from a gateway or the objects app) and writes
a typed SDK package for it into <directory>: index.js, index.d.ts, package.json and README.md.

  --url <base URL>     where the service is, e.g. http://localhost:8080
  --out <directory>    where to write the package (made if missing; its four files replaced)
  --name <name>        the package's name (default: the directory's name)
  --token <JWT>        AUTH_MODE=jwt: a bearer token to read the ontology with
  --runtime <spec>     the dependency on @ontology-object-service/client (default ^<its version>;
                       e.g. file:/path/to/libs/client outside the repository)
  --help               this text`;

/** A name npm accepts, from a directory's name. */
function packageNameOf(dir: string): string {
  const name = basename(dir)
    .toLowerCase()
    .replace(/[^a-z0-9._~-]+/g, '-')
    .replace(/^[._-]+/, '');
  return name || 'ontology-sdk';
}

/** Runs the generator with command-line `args`; resolves to the exit code. */
export async function main(args: string[], out: { log: (s: string) => void; error: (s: string) => void } = console): Promise<number> {
  let values: { url?: string; out?: string; name?: string; token?: string; runtime?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args,
      options: {
        url: { type: 'string' },
        out: { type: 'string' },
        name: { type: 'string' },
        token: { type: 'string' },
        runtime: { type: 'string' },
        help: { type: 'boolean' },
      },
      strict: true,
    }));
  } catch (e) {
    out.error(`ontology-sdk: ${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    out.log(USAGE);
    return 0;
  }
  if (!values.url || !values.out) {
    out.error(`ontology-sdk: ${!values.url ? '--url' : '--out'} is required\n\n${USAGE}`);
    return 2;
  }
  // Under `npm run sdk` npm runs the script in the repository's root; the directory the caller
  // meant is the one npm was started in.
  const cwd = process.env.npm_lifecycle_event === 'sdk' && process.env.INIT_CWD ? process.env.INIT_CWD : process.cwd();
  const dir = resolve(cwd, values.out);
  const url = values.url.replace(/\/+$/, '');

  let ontology;
  try {
    ontology = await unwrap(createObjectsClient({ baseUrl: url, token: values.token, consistency: false }).GET('/ontology'));
  } catch (e) {
    if (isConjureError(e))
      out.error(`ontology-sdk: GET ${url}/ontology answered ${e.status} ${e.errorName} ${JSON.stringify(e.parameters)}`);
    else {
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      out.error(
        `ontology-sdk: cannot reach ${url}/ontology (${cause?.code ?? cause?.message ?? (e as Error).message}); is the service running (npm start)?`,
      );
    }
    return 1;
  }

  let files: Record<string, string>;
  try {
    files = generate(ontology, { packageName: values.name ?? packageNameOf(dir), runtime: values.runtime, source: `${url}/ontology` });
  } catch (e) {
    out.error(`ontology-sdk: ${(e as Error).message}`);
    return 1;
  }
  await mkdir(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  const inside = relative(cwd, dir);
  const outside = inside.startsWith('..') || inside.startsWith(sep) || /^[A-Za-z]:/.test(inside);
  const shown = outside ? dir : inside || '.';
  const specifier = outside ? dir.split(sep).join('/') : `./${shown.split(sep).join('/')}`;
  out.log(
    `ontology-sdk: wrote ${shown}${sep} for ontology version ${ontology.version} (${ontology.objectTypes.map((t) => t.id).join(', ')})\n` +
      `  import { createClient } from '${specifier}/index.js';`,
  );
  return 0;
}
