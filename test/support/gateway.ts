import { ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * The `npm start` gateway (scripts/lib/gateway.mjs) in its own process, as `npm start` runs it, in
 * front of apps that are not its children (so it relays every request).
 */
export async function startGateway(
  objectsUrl: string,
  objectSetsUrl: string,
  options: { proxyTimeoutMs?: number } = {},
): Promise<{ url: string; child: ChildProcess }> {
  // On a port the OS picks as it listens, which the child reports once it is listening: a port
  // chosen free beforehand could be taken by another test file's process first (EADDRINUSE).
  const module = pathToFileURL(join(__dirname, '../../scripts/lib/gateway.mjs')).href;
  const opts = JSON.stringify({ port: 0, host: '127.0.0.1', objectsUrl, objectSetsUrl, ...options });
  const child = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { startGateway } from '${module}'; const g = await startGateway(${opts}); process.send(g.address().port);`,
    ],
    { stdio: ['inherit', 'inherit', 'inherit', 'ipc'] },
  );
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('gateway did not start')), 10_000);
    child.once('message', (p) => (clearTimeout(timer), resolve(p as number)));
    child.once('exit', (code) => (clearTimeout(timer), reject(new Error(`gateway did not start (exit ${code})`))));
  }).catch((e: unknown) => {
    child.kill();
    throw e;
  });
  child.channel?.unref();
  return { url: `http://127.0.0.1:${port}`, child };
}

/** A directory of its own for an nginx run by a test (its prefix), with the temp directories nginx writes into. */
export function nginxDirectory(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `${name}-`));
  for (const d of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, d));
  return dir;
}

/**
 * `site` (the rendered docker/nginx/default.conf.template) as `dir`/default.conf, included by a
 * `dir`/nginx.conf that runs nginx in the foreground as one process, its files all in `dir`.
 */
export function writeNginxConfig(dir: string, site: string): void {
  writeFileSync(join(dir, 'default.conf'), site);
  writeFileSync(
    join(dir, 'nginx.conf'),
    `daemon off; master_process off; worker_processes 1; pid ${dir}/nginx.pid; error_log ${dir}/error.log;
events { worker_connections 64; }
http {
  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fastcgi; uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;
  include ${dir}/default.conf;
}
`,
  );
}
