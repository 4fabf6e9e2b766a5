import type { INestApplication } from '@nestjs/common';

/** Longest the app may take to close before it exits anyway. */
const CLOSE_TIMEOUT_MS = 5_000;

/**
 * Under `npm start` each app is a child process with an IPC channel to scripts/start.mjs, which
 * stops it with a signal. Should start.mjs die without doing so (SIGKILL, the OOM killer), the
 * channel closes: the app then closes and exits too, instead of living on as an orphan that holds
 * its port and database connections. Takes the app while it is still being created, so that this
 * holds from the start. Does nothing without an IPC channel (Docker, tests).
 */
export function stopWithParent(app: Promise<INestApplication>): void {
  if (!process.connected) return;
  process.once('disconnect', () => {
    setTimeout(() => process.exit(1), CLOSE_TIMEOUT_MS).unref();
    app
      .then((a) => a.close())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  });
}
