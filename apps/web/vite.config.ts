import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
import tailwindcss from '@tailwindcss/vite';

const root = fileURLToPath(new URL('.', import.meta.url));

/** The console: `vite` serves it with /api proxied to a local server, `vite build` writes apps/web/dist. */
export default defineConfig({
  root,
  plugins: [react(), tailwindcss()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: true,
    rollupOptions: {
      output: {
        // vendor code changes rarely: keep it in its own cacheable chunks
        manualChunks(id) {
          if (/node_modules\/(react|react-dom|react-router|scheduler|cookie|set-cookie-parser)\//.test(id))
            return 'react';
          if (
            /node_modules\/(zod|i18next|react-i18next|jotai|html-parse-stringify|void-elements|use-sync-external-store)\//.test(
              id,
            )
          )
            return 'vendor';
          return undefined;
        },
      },
      onwarn(warning, warn) {
        // zod ships comments rollup cannot place; harmless
        if (warning.code === 'INVALID_ANNOTATION' && warning.id?.includes('/zod/')) return;
        warn(warning);
      },
    },
  },
  server: {
    port: 5173,
    proxy: {
      '/api': { target: process.env.LINTEL_API_URL ?? 'http://localhost:8080', changeOrigin: true, ws: true },
    },
  },
  preview: {
    proxy: {
      '/api': { target: process.env.LINTEL_API_URL ?? 'http://localhost:8080', changeOrigin: true, ws: true },
    },
  },
});
