#!/usr/bin/env node
// Loads a file of objects through POST /objects/ingest (see README "Loading files").
//   npm run ingest -- FILE [--type T] [--environment E] [--url URL] [--token JWT] [--on-error skip|stop] [--resume]
import { parseArgs } from 'node:util';
import { DEFAULT_BATCH, FatalError, ingestFile, IngestUsageError, MAX_BATCH } from './lib/ingest.mjs';

const USAGE = `usage: npm run ingest -- FILE [options]

FILE is NDJSON (one object per line, as POST /objects/ingest takes them) or CSV with a header
(.csv, or --format csv): an "id" column, optional "environmentId", "type" and "tags" columns,
"links.<linkId>" columns, and one column per property; ";" separates several values.

  --type T          object type of the lines that name none
  --environment E   environment of the lines that name none
  --url URL         the service (default http://127.0.0.1:\${GATEWAY_PORT:-8080}, what npm start serves)
  --token JWT       bearer token (AUTH_MODE=jwt)
  --origin O        origin of CSV property values (default: the file's name)
  --format F        ndjson or csv (default: by the file's extension, else ndjson)
  --batch-size N    objects per request, 1 to ${MAX_BATCH} (default ${DEFAULT_BATCH})
  --concurrency N   requests in flight (default 4); one object's lines still apply in file order
  --on-error E      a bad line (malformed, or refused by the service): skip (default: reported
                    by its line number, the rest loads) or stop (everything before it loads)
  --resume          load what an earlier run did not (FILE.ingest-state.json)
  --no-progress     no progress bar (there is none when stderr is not a terminal)

Exit codes: 0 every line loaded; 1 stopped before the end of the file (--resume goes on);
2 bad options; 3 the whole file went through but some lines were bad (reported on stderr).`;

let parsed;
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: {
      type: { type: 'string' },
      environment: { type: 'string' },
      url: { type: 'string', default: `http://127.0.0.1:${process.env.GATEWAY_PORT || 8080}` },
      token: { type: 'string' },
      origin: { type: 'string' },
      format: { type: 'string' },
      'batch-size': { type: 'string', default: String(DEFAULT_BATCH) },
      concurrency: { type: 'string', default: '4' },
      'on-error': { type: 'string', default: 'skip' },
      resume: { type: 'boolean', default: false },
      'no-progress': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
} catch (e) {
  console.error(`${e.message}\n\n${USAGE}`);
  process.exit(2);
}
const { values, positionals } = parsed;
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
if (positionals.length !== 1) {
  console.error(`give exactly one FILE\n\n${USAGE}`);
  process.exit(2);
}

try {
  const summary = await ingestFile({
    file: positionals[0],
    type: values.type,
    environment: values.environment,
    url: values.url,
    token: values.token,
    origin: values.origin,
    format: values.format,
    batchSize: values['batch-size'],
    concurrency: values.concurrency,
    onError: values['on-error'],
    resume: values.resume,
    progress: !values['no-progress'] && process.stderr.isTTY === true,
  });
  process.exit(summary.stopped ? 1 : summary.failed > 0 ? 3 : 0);
} catch (e) {
  if (e instanceof IngestUsageError) {
    console.error(e.message);
    process.exit(2);
  }
  console.error(e instanceof FatalError ? `stopped: ${e.message}` : `ingest failed: ${e.stack ?? e}`);
  process.exit(1);
}
