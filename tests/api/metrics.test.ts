/**
 * Metrics (issue 24 item 3): `/api/v0/metrics` in the Prometheus text format, read by a parser that is not
 * ours (parse-prometheus-text-format): requests by route and status with latency histograms, jobs by kind
 * and state, device messages, websocket clients, the database pool. Read by a session with
 * `system_info.view`, or by Prometheus with the operator's metrics token, which opens nothing else.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { getCommand } from '@lintel/commands';
import type { ApiClient } from '@lintel/core';
import { startTestServer, type TestServer } from '../support/server';
import { admin, rootGroup, tokenOf, userWith } from '../support/fixtures';
import { RawSocket } from '../support/ws';

interface Sample {
  labels?: Record<string, string>;
  value?: string;
  buckets?: Record<string, string>;
  count?: string;
  sum?: string;
}
interface Family {
  name: string;
  help: string;
  type: string;
  metrics: Sample[];
}

const TOKEN = 'metrics-token-0123456789abcdef';
let ts: TestServer;
let api: ApiClient;

beforeAll(async () => {
  ts = await startTestServer({ config: { metricsToken: TOKEN } });
  api = await admin(ts);
});
afterAll(() => ts?.close());

/** the text of the last scrape */
let text = '';

async function scrape(authorization: string): Promise<Map<string, Family>> {
  const res = await fetch(`${ts.url}/api/v0/metrics`, { headers: { authorization } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  text = await res.text();
  // throws on a line that is not the text format
  const families = parsePrometheusTextFormat(text) as Family[];
  return new Map(families.map((f) => [f.name, f]));
}

const sample = (f: Family | undefined, labels: Record<string, string>) =>
  f?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));

describe('metrics', () => {
  it('counts requests by route and status, with latency histograms', async () => {
    const before = await scrape(`Bearer ${tokenOf(api)}`);
    const was = Number(
      sample(before.get('lintel_http_requests_total'), { route: '/api/v0/users', status: '200' })?.value ?? 0,
    );
    for (let i = 0; i < 3; i++) await getCommand('user.list').run({ api }, {});
    // a refusal is counted by its status, an unknown path by no route (never the raw URL)
    expect((await fetch(`${ts.url}/api/v0/users`)).status).toBe(401);
    expect((await fetch(`${ts.url}/api/v0/no/such/secret-token-in-path`)).status).toBe(404);

    const m = await scrape(`Bearer ${tokenOf(api)}`);
    const requests = m.get('lintel_http_requests_total')!;
    expect(requests.type).toBe('COUNTER');
    expect(Number(sample(requests, { method: 'GET', route: '/api/v0/users', status: '200' })!.value)).toBe(
      was + 3,
    );
    expect(Number(sample(requests, { route: '/api/v0/users', status: '401' })!.value)).toBeGreaterThanOrEqual(
      1,
    );
    expect(sample(requests, { status: '404' })!.labels!.route).toBe('(no route)');
    expect(JSON.stringify(requests)).not.toContain('secret-token-in-path');

    const latency = m.get('lintel_http_request_duration_seconds')!;
    expect(latency.type).toBe('HISTOGRAM');
    expect(Object.keys(latency.metrics[0]!.buckets!)).toContain('+Inf');
    // the parser folds a histogram's label sets into one (its own limitation), so the route's series are
    // read from the exposition's lines, which the parser has accepted as well-formed above
    const line = (suffix: string, le?: string) =>
      Number(
        new RegExp(
          `^lintel_http_request_duration_seconds_${suffix}\\{${le ? `le="${le.replace('+', '\\+')}",` : ''}method="GET",route="/api/v0/users"\\} (\\S+)$`,
          'm',
        ).exec(text)?.[1],
      );
    expect(line('count')).toBeGreaterThanOrEqual(was + 3);
    expect(line('bucket', '+Inf')).toBe(line('count'));
    expect(line('bucket', '30')).toBe(line('count'));
    expect(line('sum')).toBeGreaterThan(0);
  });

  it('reads jobs by kind and state, the database pool and the process', async () => {
    const m = await scrape(`Bearer ${tokenOf(api)}`);
    const jobs = m.get('lintel_jobs')!;
    expect(jobs.type).toBe('GAUGE');
    // the jobs module queues the day's pruning of the outbox at start
    const prune = jobs.metrics.filter((s) => s.labels!.kind === 'events.prune');
    expect(prune.reduce((n, s) => n + Number(s.value), 0)).toBeGreaterThanOrEqual(1);
    const pool = m.get('lintel_db_pool_connections')!;
    expect(Number(sample(pool, { state: 'max' })!.value)).toBe(process.env.DATABASE_URL ? 10 : 1);
    expect(Number(sample(pool, { state: 'total' })!.value)).toBeGreaterThanOrEqual(1);
    expect(m.get('lintel_db_pool_waiting')!.metrics[0]!.value).toBeDefined();
    expect(
      sample(m.get('lintel_db_info'), { kind: process.env.DATABASE_URL ? 'postgres' : 'pglite' })!.value,
    ).toBe('1');
    expect(Number(m.get('lintel_process_resident_memory_bytes')?.metrics[0]?.value)).toBeGreaterThan(0);
  });

  it('counts websocket clients and device messages', async () => {
    const socket = await RawSocket.signedIn(ts.url, tokenOf(api));
    let m = await scrape(`Bearer ${tokenOf(api)}`);
    expect(m.get('lintel_websocket_clients')!.metrics[0]!.value).toBe('1');
    socket.ws.close();
    await socket.closed;
    // the server counts the socket gone once it saw the close
    for (let i = 0; i < 200; i++) {
      m = await scrape(`Bearer ${tokenOf(api)}`);
      if (m.get('lintel_websocket_clients')!.metrics[0]!.value === '0') break;
    }
    expect(m.get('lintel_websocket_clients')!.metrics[0]!.value).toBe('0');

    const serial = `MET-${Date.now()}`;
    const { data } = await getCommand('device.create').run(
      { api },
      { name: serial, type: 'panel', serial_number: serial, domain_id: await rootGroup(api) },
    );
    const c = await getCommand('device.credentials').run({ api }, { id: data.id });
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${ts.url}/api/v0/device-gateway/heartbeat`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Basic ${Buffer.from(`${c.login}:${c.password}`).toString('base64')}`,
        },
        body: '{}',
      });
      expect(res.status).toBeLessThan(300);
    }
    m = await scrape(`Bearer ${tokenOf(api)}`);
    const messages = m.get('lintel_device_messages_total')!;
    expect(Number(sample(messages, { command: 'device_gateway.heartbeat', outcome: 'ok' })!.value)).toBe(2);
    expect(m.get('lintel_device_messages_refused_total')!.metrics[0]!.value).toBe('0');
  });

  it('is read by the metrics token, which opens nothing else, or by system_info.view', async () => {
    const m = await scrape(`Bearer ${TOKEN}`);
    expect(m.has('lintel_http_requests_total')).toBe(true);
    // the token is no session anywhere else
    expect(
      (await fetch(`${ts.url}/api/v0/users`, { headers: { authorization: `Bearer ${TOKEN}` } })).status,
    ).toBe(401);
    expect((await fetch(`${ts.url}/api/v0/metrics`)).status).toBe(401);
    expect(
      (await fetch(`${ts.url}/api/v0/metrics`, { headers: { authorization: `Bearer ${TOKEN}x` } })).status,
    ).toBe(401);
    const root = await rootGroup(api);
    const viewer = await (await userWith(ts, api, { permissions: ['users.view'], domains: [root] })).client();
    const refused = await fetch(`${ts.url}/api/v0/metrics`, {
      headers: { authorization: `Bearer ${tokenOf(viewer)}` },
    });
    expect(refused.status).toBe(403);
    const sysinfo = await (
      await userWith(ts, api, { permissions: ['system_info.view'], domains: [root] })
    ).client();
    expect((await scrape(`Bearer ${tokenOf(sysinfo)}`)).has('lintel_jobs')).toBe(true);
  });
});
