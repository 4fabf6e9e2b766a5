// Started by `npm start` (scripts/start.mjs) with an IPC channel, to stop the embedded PostgreSQL
// if start.mjs itself dies without stopping it (SIGKILL, the OOM killer): PostgreSQL does not
// notice when the process that started it is gone, and would keep its data directory locked.
// The apps need no such help: they stop when their own IPC channel to start.mjs closes.
//
// start.mjs sends `{ guard: { pid, signal, escalate, graceMs } }` for each process to guard. When
// the channel closes (start.mjs has exited, whether it stopped everything or not), each guarded
// process still alive gets `signal`, then `escalate` after `graceMs`, and this process exits.

/** @type {Map<number, { signal: NodeJS.Signals, escalate: NodeJS.Signals, graceMs: number }>} */
const guarded = new Map();

// A Ctrl+C reaches the whole foreground process group, this process too; start.mjs decides
// what stops and when, and this process goes when start.mjs has gone.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => undefined);

process.on('message', (message) => {
  if (message?.guard) guarded.set(message.guard.pid, message.guard);
});

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

process.on('disconnect', async () => {
  const left = [...guarded].filter(([pid]) => alive(pid));
  for (const [pid, g] of left) process.kill(pid, g.signal);
  const started = Date.now();
  const escalated = new Set();
  while (left.some(([pid]) => alive(pid))) {
    for (const [pid, g] of left) {
      if (!escalated.has(pid) && Date.now() - started > g.graceMs && alive(pid)) {
        escalated.add(pid);
        process.kill(pid, g.escalate);
      }
    }
    if (Date.now() - started > 30_000) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  if (left.length) console.error(`npm start: its parent process was gone; stopped ${left.length} process(es) it had left running`);
  process.exit(0);
});
