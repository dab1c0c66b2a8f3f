// Builds bench/table-scroll/harness (the users table alone, on the console's own code) with the console's
// Vite plugins. `node bench/table-scroll/build-harness.mjs [outDir]` prints the folder it wrote.
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const harnessRoot = path.join(here, 'harness');
export const defaultOutDir = path.join(os.tmpdir(), 'lintel-table-harness');

export async function buildHarness(outDir = defaultOutDir) {
  // a production build of React, whatever the caller's NODE_ENV (vitest sets "test")
  process.env.NODE_ENV = 'production';
  const [{ build }, { default: react }, { default: tailwindcss }] = await Promise.all([
    import('vite'),
    import('@vitejs/plugin-react'),
    import('@tailwindcss/vite'),
  ]);
  await build({
    root: harnessRoot,
    configFile: false,
    logLevel: 'warn',
    mode: 'production',
    plugins: [react(), tailwindcss()],
    build: {
      outDir,
      emptyOutDir: true,
      sourcemap: false,
      chunkSizeWarningLimit: 2000,
      rollupOptions: {
        onwarn(warning, warn) {
          if (warning.code === 'INVALID_ANNOTATION' && warning.id?.includes('/zod/')) return;
          warn(warning);
        },
      },
    },
  });
  return outDir;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  console.log(await buildHarness(process.argv[2] ? path.resolve(process.argv[2]) : defaultOutDir));
}
