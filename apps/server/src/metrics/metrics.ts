import { sql } from 'kysely';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ServerContext } from '../context';

/**
 * The instance's metrics in the Prometheus text format (issue 24 item 3; `GET /api/v0/metrics`), made with
 * prom-client. One registry per server (not prom-client's global one): a process may hold several servers
 * (the tests do), and each answers for its own. What is counted as it happens — requests by route and
 * status with their latency, device messages — is this instance's since it started; what is read at each
 * scrape — jobs by kind and state, the database — is the installation's, as the database holds it.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly latency: Histogram<'method' | 'route'>;
  private readonly deviceMessages: Counter<'command' | 'outcome'>;

  constructor(contextOf: () => ServerContext) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'lintel_' });
    this.requests = new Counter({
      name: 'lintel_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.latency = new Histogram({
      name: 'lintel_http_request_duration_seconds',
      help: 'Time to answer an HTTP request, by method and route pattern',
      labelNames: ['method', 'route'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.deviceMessages = new Counter({
      name: 'lintel_device_messages_total',
      help: 'Messages devices pushed (over MQTT or HTTP) that this instance handled, by command and outcome',
      labelNames: ['command', 'outcome'],
      registers,
    });
    const app = () => contextOf();
    new Counter({
      name: 'lintel_device_messages_refused_total',
      help: 'Device messages refused before any work: the device over its budget, or the queue full',
      registers,
      collect() {
        this.reset();
        this.inc(app().devices.refused);
      },
    });
    new Gauge({
      name: 'lintel_websocket_clients',
      help: 'Open websocket connections of this instance',
      registers,
      collect() {
        this.set(app().sockets.size);
      },
    });
    new Gauge({
      name: 'lintel_jobs',
      help: 'Durable jobs of the installation, by kind and state',
      labelNames: ['kind', 'state'],
      registers,
      async collect() {
        const rows = await sql<{ kind: string; state: string; n: number }>`
          select kind, state, count(*)::int as n from jobs group by kind, state`.execute(app().db);
        this.reset();
        for (const r of rows.rows) this.set({ kind: r.kind, state: r.state }, r.n);
      },
    });
    new Gauge({
      name: 'lintel_db_pool_connections',
      help: 'Database connections of this instance, by state (PGlite: its one connection)',
      labelNames: ['state'],
      registers,
      collect() {
        const s = app().database.poolStats();
        this.set({ state: 'total' }, s.total);
        this.set({ state: 'idle' }, s.idle);
        this.set({ state: 'max' }, s.max);
      },
    });
    new Gauge({
      name: 'lintel_db_pool_waiting',
      help: 'Borrowers waiting for a database connection of this instance',
      registers,
      collect() {
        this.set(app().database.poolStats().waiting);
      },
    });
    new Gauge({
      name: 'lintel_db_info',
      help: 'The database kind (pglite or postgres); always 1',
      labelNames: ['kind'],
      registers,
      collect() {
        this.reset();
        this.set({ kind: app().database.kind }, 1);
      },
    });
  }

  /** One answered request (the HTTP transport's onResponse hook). */
  request(method: string, route: string, status: number, seconds: number): void {
    this.requests.inc({ method, route, status: String(status) });
    this.latency.observe({ method, route }, seconds);
  }

  /** One device message through the pipeline. */
  deviceMessage(command: string, ok: boolean): void {
    this.deviceMessages.inc({ command, outcome: ok ? 'ok' : 'error' });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
