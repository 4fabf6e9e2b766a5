// The heap of a Node process started with --inspect=127.0.0.1:<port>, after a full garbage
// collection, through the Chrome DevTools Protocol (HeapProfiler.collectGarbage, then
// process.memoryUsage() evaluated in the process). Used for the memory of idle event streams.
import { readFileSync } from 'node:fs';

/** Connects to the inspector at 127.0.0.1:`port`; resolves to { memoryAfterGc, close }. */
export async function connectInspector(port, timeoutMs = 10_000) {
  const res = await fetch(`http://127.0.0.1:${port}/json/list`, { signal: AbortSignal.timeout(timeoutMs) });
  const [target] = await res.json();
  if (!target?.webSocketDebuggerUrl) throw new Error(`no inspector target at port ${port}`);
  const ws = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    ws.addEventListener('open', resolve, { once: true });
    ws.addEventListener('error', () => reject(new Error(`cannot connect to the inspector at port ${port}`)), { once: true });
  });
  let nextId = 1;
  const waiting = new Map();
  ws.addEventListener('message', (m) => {
    const msg = JSON.parse(m.data);
    const w = msg.id !== undefined && waiting.get(msg.id);
    if (!w) return;
    waiting.delete(msg.id);
    if (msg.error) w.reject(new Error(msg.error.message));
    else w.resolve(msg.result);
  });
  const call = (method, params = {}) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => (waiting.delete(id), reject(new Error(`inspector: ${method} timed out`))), timeoutMs);
      waiting.set(id, { resolve: (r) => (clearTimeout(timer), resolve(r)), reject: (e) => (clearTimeout(timer), reject(e)) });
      ws.send(JSON.stringify({ id, method, params }));
    });
  return {
    /** process.memoryUsage() of the process after two full collections (bytes). */
    async memoryAfterGc() {
      await call('HeapProfiler.collectGarbage');
      await call('HeapProfiler.collectGarbage');
      const { result, exceptionDetails } = await call('Runtime.evaluate', { expression: 'JSON.stringify(process.memoryUsage())', returnByValue: true });
      if (exceptionDetails) throw new Error(`inspector: ${exceptionDetails.text}`);
      return JSON.parse(result.value);
    },
    close() {
      ws.close();
    },
  };
}

/** Resident set size of process `pid` in bytes, from /proc (VmRSS); null without /proc. */
export function rssBytes(pid) {
  try {
    const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}
