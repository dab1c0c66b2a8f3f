// Preloaded into the server by bench/pglite-load (NODE_OPTIONS=--import): records the event loop's delay
// while the server is under load and writes its percentiles to LOOP_DELAY_FILE when the process exits.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import fs from 'node:fs';

const h = monitorEventLoopDelay({ resolution: 10 });
h.enable();
// the benchmark sends SIGUSR2 when its load starts: start-up (migrations) is not counted
process.on('SIGUSR2', () => h.reset());
process.on('exit', () => {
  h.disable();
  const ms = (ns) => Math.round(ns / 1e6);
  fs.writeFileSync(
    process.env.LOOP_DELAY_FILE,
    JSON.stringify({ p50: ms(h.percentile(50)), p99: ms(h.percentile(99)), max: ms(h.max) }),
  );
});
