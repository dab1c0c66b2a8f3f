import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';

/**
 * A small HTTP server that answers as an Axxon One server's web API does (AxxonSoft's documentation of the
 * HTTP API, "Macros" and "Cameras"): it stands for the third-party video server in tests, as sipp stands for a
 * SIP provider. Basic authorization is required (anonymous requests are refused, 401); whatever prefix the
 * web server is given (`/asip-api`, any path before the API's own) is served the same, so each integration of
 * a test can have a URL of its own. `GET {prefix}/macro/list/` answers `{macroCommands: [{id, name}]}` (the automatic rules too unless
 * `exclude_auto` is given); `GET {prefix}/camera/list?limit=&next_page=&query=` answers `{cameras: [...]}` a
 * page at a time with `nextPageToken` while more remain. `hang` makes it accept requests and never answer.
 */
export interface AxxonMacro {
  id: string;
  name: string;
  auto?: boolean;
}
export interface AxxonCameraRow {
  displayId: string;
  displayName: string;
  server?: string;
}

export interface FakeAxxon {
  url: string;
  /** every request's path and query, and the Authorization header it came with */
  requests: Array<{ path: string; authorization: string | undefined }>;
  hang: boolean;
  close(): Promise<void>;
}

export async function startFakeAxxon(opts: {
  login: string;
  password: string;
  macros: AxxonMacro[];
  cameras: AxxonCameraRow[];
  /** serve HTTPS with this certificate and key */
  tls?: { cert: string; key: string };
}): Promise<FakeAxxon> {
  const expected = `Basic ${Buffer.from(`${opts.login}:${opts.password}`).toString('base64')}`;
  const state: Pick<FakeAxxon, 'requests' | 'hang'> = { requests: [], hang: false };
  const send = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const handler: http.RequestListener = (req, res) => {
    const url = new URL(req.url ?? '/', 'http://axxon');
    state.requests.push({ path: `${url.pathname}${url.search}`, authorization: req.headers.authorization });
    if (state.hang) return;
    if (req.headers.authorization !== expected) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="Axxon"' });
      return res.end();
    }
    const path = /\/(macro\/list\/?|camera\/list)$/.exec(url.pathname)?.[0] ?? '';
    if (req.method === 'GET' && (path === '/macro/list/' || path === '/macro/list')) {
      const exclude = url.searchParams.has('exclude_auto');
      return send(res, 200, {
        macroCommands: opts.macros
          .filter((m) => !(exclude && m.auto))
          .map((m) => ({ id: m.id, name: m.name })),
      });
    }
    if (req.method === 'GET' && path === '/camera/list') {
      const limit = Number(url.searchParams.get('limit') ?? 1000);
      const from = Number(url.searchParams.get('next_page') ?? 0);
      const query = url.searchParams.get('query')?.toLowerCase();
      const matching = opts.cameras.filter((c) => !query || c.displayName.toLowerCase().includes(query));
      const page = matching.slice(from, from + limit);
      const server = (c: AxxonCameraRow) => c.server ?? 'Server1';
      return send(res, 200, {
        cameras: page.map((c) => ({
          accessPoint: `hosts/${server(c)}/DeviceIpint.${c.displayId}/SourceEndpoint.video:0:0`,
          archives: [],
          audioStreams: [],
          azimuth: '0',
          comment: '',
          detectors: [],
          displayId: c.displayId,
          displayName: c.displayName,
          enabled: true,
          groups: [],
          ipAddress: `10.0.0.${c.displayId}`,
          isActivated: true,
          latitude: '0',
          longitude: '0',
          model: 'Virtual several streams',
          offlineDetectors: [],
          ptzs: [],
          textSources: [],
          vendor: 'AxxonSoft',
          videoStreams: [
            { accessPoint: `hosts/${server(c)}/DeviceIpint.${c.displayId}/SourceEndpoint.video:0:0` },
          ],
        })),
        ...(from + limit < matching.length ? { nextPageToken: String(from + limit) } : {}),
      });
    }
    send(res, 404, { error: 'not found' });
  };
  const server = opts.tls
    ? https.createServer({ cert: opts.tls.cert, key: opts.tls.key }, handler)
    : http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `${opts.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    get requests() {
      return state.requests;
    },
    get hang() {
      return state.hang;
    },
    set hang(v: boolean) {
      state.hang = v;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port nothing listens on (a server started and closed at once): connections to it are refused. */
export async function closedPort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}
