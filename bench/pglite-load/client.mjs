// The load of bench/pglite-load, as a process of its own (so the server's event loop and the client's are
// not one): CONNECTIONS keep-alive connections, each looping one GET for SECONDS, every reply timed from the
// moment its request was handed to the socket's agent (for a connection's first request that includes
// the TCP connect). Prints one JSON line: each reply's [ms, status, first-on-its-connection].
import http from 'node:http';

const url = new URL(process.env.URL);
const connections = Number(process.env.CONNECTIONS ?? 200);
const seconds = Number(process.env.SECONDS ?? 20);
const token = process.env.TOKEN;
const until = performance.now() + seconds * 1000;
const replies = [];
let errors = 0;

function once(agent, first) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const req = http.request(
      url,
      { agent, headers: token ? { authorization: `Bearer ${token}` } : {}, timeout: 60_000 },
      (res) => {
        res.resume();
        res.on('end', () => {
          replies.push([Math.round(performance.now() - t0), res.statusCode, first]);
          resolve(res.headers.connection === 'close');
        });
      },
    );
    req.on('error', () => {
      errors++;
      resolve(true);
    });
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

async function loop() {
  let agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  let first = true;
  while (performance.now() < until) {
    const closed = await once(agent, first);
    first = closed;
    if (closed) {
      agent.destroy();
      agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    }
  }
  agent.destroy();
}

await Promise.all(Array.from({ length: connections }, loop));
process.stdout.write(JSON.stringify({ replies, errors }) + '\n');
