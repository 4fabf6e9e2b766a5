import { Injectable, OnModuleInit, Optional } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { AppConfig } from '../config';
import { SqlExecutor } from '../database/sql-executor';
import { asPromMetric, KeyedHistogram } from './keyed-histogram';
import { RESPONSE_OBSERVER, ResponseObserverSlot } from '../http/express-adapter';

/** Sub-millisecond reads are the norm here, so the buckets start at 0.5 ms (prom-client's at 5 ms). */
const HTTP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const STATEMENT_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

/** Requests that matched no route share one label value, so a scan of random paths cannot grow the series. */
export const UNMATCHED_ROUTE = 'unmatched';

interface Instruments {
  requestSeconds: KeyedHistogram<'method' | 'route' | 'status'>;
  statementSeconds: KeyedHistogram<'statement'>;
  membersCache: Counter<'result'>;
  objectsIngested: Counter;
  versionsWritten: Counter<'operation'>;
  changeFeedLag: Gauge;
  eventStreams: Gauge;
  eventsSent: Counter<'event'>;
  liveSetsLag: Gauge;
}

/**
 * The app's Prometheus metrics (prom-client), on a registry of its own (the e2e tests run both
 * apps in one process). With METRICS_ENABLED=false nothing is created and every method returns
 * at once, so the switch is also the baseline of the overhead benchmark.
 */
@Injectable()
export class AppMetrics implements OnModuleInit {
  readonly registry = new Registry();
  private readonly instruments?: Instruments;

  constructor(
    config: AppConfig,
    @Optional() private readonly sql?: SqlExecutor,
  ) {
    if (!config.metricsEnabled) return;
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    // The two per-request paths use KeyedHistogram (see there why), the rest prom-client's own.
    const requestSeconds = new KeyedHistogram<'method' | 'route' | 'status'>(
      'http_request_duration_seconds',
      'Time from request to the last byte of the response, by method, route template and status',
      HTTP_BUCKETS,
    );
    const statementSeconds = new KeyedHistogram<'statement'>(
      'db_statement_duration_seconds',
      'Duration of each hot SQL statement (named prepared statements), by statement name',
      STATEMENT_BUCKETS,
    );
    this.registry.registerMetric(
      asPromMetric(requestSeconds.countAs('http_requests_total', 'HTTP requests answered, by method, route template and status')),
    );
    this.registry.registerMetric(asPromMetric(requestSeconds));
    this.registry.registerMetric(asPromMetric(statementSeconds));
    this.instruments = {
      requestSeconds,
      statementSeconds,
      membersCache: new Counter({
        name: 'object_sets_members_cache_total',
        help: 'EVENTUALLY member reads answered from the members cache (hit) or not (miss)',
        labelNames: ['result'],
        registers,
      }),
      objectsIngested: new Counter({ name: 'objects_ingested_total', help: 'Objects accepted by POST /objects/ingest', registers }),
      versionsWritten: new Counter({
        name: 'object_versions_written_total',
        help: 'New object versions written, by operation (put, ingest)',
        labelNames: ['operation'],
        registers,
      }),
      // Live sets (docs/api.md §12): how far the feed's watermark was behind the clock at its last
      // page (objects app); open event streams, events sent, and how far the events' live position
      // is behind the clock (object-sets app).
      changeFeedLag: new Gauge({
        name: 'objects_change_feed_lag_seconds',
        help: 'How far the change feed watermark was behind the clock when a page was last read',
        registers,
      }),
      eventStreams: new Gauge({
        name: 'object_set_event_streams',
        help: 'Open object set event streams (GET /object-sets/{id}/events)',
        registers,
      }),
      eventsSent: new Counter({
        name: 'object_set_events_sent_total',
        help: 'Events written to object set event streams, by event',
        labelNames: ['event'],
        registers,
      }),
      liveSetsLag: new Gauge({
        name: 'object_set_events_lag_seconds',
        help: 'How far the live position of object set events is behind the clock',
        registers,
      }),
    };
    const pool = (): { totalCount: number; idleCount: number; waitingCount: number } | undefined => this.sql?.pool;
    new Gauge({
      name: 'db_pool_connections',
      help: 'Connections the pg pool holds (open)',
      registers,
      collect() {
        this.set(pool()?.totalCount ?? 0);
      },
    });
    new Gauge({
      name: 'db_pool_idle_connections',
      help: 'Open pg pool connections not in use',
      registers,
      collect() {
        this.set(pool()?.idleCount ?? 0);
      },
    });
    // Read replicas (docs/api.md §11), when the app has any: read statements by target, each replica's state and lag.
    const router = () => this.sql?.router;
    const counted = { primary: 0, replica: 0 };
    new Counter({
      name: 'db_read_statements_total',
      help: 'Read statements routed to the primary or to a replica (apps with DATABASE_REPLICA_URLS)',
      labelNames: ['target'],
      registers,
      collect() {
        const reads = router()?.reads;
        if (!reads) return;
        for (const target of ['primary', 'replica'] as const) {
          if (reads[target] > counted[target]) this.inc({ target }, reads[target] - counted[target]);
          counted[target] = reads[target];
        }
      },
    });
    new Gauge({
      name: 'db_replica_lag_seconds',
      help: 'How far each replica is behind the primary (since the oldest WAL it has not replayed); absent while it is out of rotation',
      labelNames: ['replica'],
      registers,
      collect() {
        this.reset();
        for (const r of router()?.status() ?? []) if (r.lagMs !== undefined) this.set({ replica: r.name }, r.lagMs / 1000);
      },
    });
    new Gauge({
      name: 'db_replica_up',
      help: 'Whether each replica is in rotation (1) or not (0)',
      labelNames: ['replica'],
      registers,
      collect() {
        this.reset();
        for (const r of router()?.status() ?? []) this.set({ replica: r.name }, r.up ? 1 : 0);
      },
    });
    new Gauge({
      name: 'db_pool_waiting_requests',
      help: 'Queries waiting for a pg pool connection',
      registers,
      collect() {
        this.set(pool()?.waitingCount ?? 0);
      },
    });
  }

  get enabled(): boolean {
    return this.instruments !== undefined;
  }

  onModuleInit(): void {
    const statementSeconds = this.instruments?.statementSeconds;
    if (statementSeconds)
      this.sql?.observeStatements((statement, seconds) => statementSeconds.observe(statement, 0, seconds, statementLabels, statement));
  }

  /**
   * Counts and times every request of `server` under its route template (`/objects/:id`), once
   * answered. On a server of createExpressServer (both apps, and the e2e tests) its responses
   * report their own end (RESPONSE_OBSERVER), so a request costs no listener or closure; on any
   * other server, a 'request' listener ahead of Express's and a 'finish' listener. Either way not
   * an Express middleware: a middleware layer costs each request more than the counting does.
   */
  instrumentHttpServer(server: Server): void {
    if (!this.instruments) return;
    const slot = (server as Server & { [RESPONSE_OBSERVER]?: ResponseObserverSlot })[RESPONSE_OBSERVER];
    if (slot) slot.observe = this.observeResponse;
    else server.prependListener('request', this.onRequest);
  }

  private readonly observeResponse = (res: ServerResponse & { req: IncomingMessage }, startedAt: number): void => {
    // The Express route (one per controller method; none when no route matched), the method
    // (a GET route also answers HEAD) and the status name the series, without building a string.
    const req = res.req as Request;
    this.instruments!.requestSeconds.observe(
      req.route ?? UNMATCHED_ROUTE,
      methodCode(req.method) * 1000 + res.statusCode,
      (performance.now() - startedAt) / 1000,
      requestLabels,
      res,
    );
  };

  private readonly onRequest = (req: Request, res: Response): void => {
    const started = performance.now();
    res.once('finish', () => this.observeResponse(res, started));
  };

  membersCacheRead(hit: boolean): void {
    this.instruments?.membersCache.inc({ result: hit ? 'hit' : 'miss' });
  }

  objectsIngested(count: number): void {
    this.instruments?.objectsIngested.inc(count);
  }

  versionsWritten(operation: 'put' | 'ingest', count: number): void {
    if (count > 0) this.instruments?.versionsWritten.inc({ operation }, count);
  }

  changeFeedLag(ms: number): void {
    this.instruments?.changeFeedLag.set(Math.max(0, ms) / 1000);
  }

  eventStreamsOpen(count: number): void {
    this.instruments?.eventStreams.set(count);
  }

  eventSent(event: string): void {
    this.instruments?.eventsSent.inc({ event });
  }

  liveSetsLag(ms: number): void {
    this.instruments?.liveSetsLag.set(Math.max(0, ms) / 1000);
  }
}

const METHOD_CODES = new Map<string, number>();

/** A small number per HTTP method (Node's parser knows a fixed set of them). */
function methodCode(method: string): number {
  let code = METHOD_CODES.get(method);
  if (code === undefined) METHOD_CODES.set(method, (code = METHOD_CODES.size));
  return code;
}

/** The labels of a request's series (the first time it is seen). */
function requestLabels(res: ServerResponse & { req: IncomingMessage }): Record<'method' | 'route' | 'status', string> {
  const req = res.req as Request;
  return { method: req.method, route: routeTemplate(req), status: String(res.statusCode) };
}

/** The labels of a statement's series (the first time it is seen). */
function statementLabels(statement: string): Record<'statement', string> {
  return { statement };
}

/** The Express route the request matched, with its parameters as written (`/objects/:environmentId/:id`). */
function routeTemplate(req: Request): string {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' ? path : UNMATCHED_ROUTE;
}
