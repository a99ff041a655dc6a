import { fileURLToPath } from 'node:url';
import { defineConfig, type UserConfig } from 'vite';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/**
 * The console: built into dist/console, served by the API at /app/ (apps/api/src/console-static.ts).
 * `@switchboard/engine` is the server's own validation code (libs/engine is pure TypeScript), and so is
 * `@switchboard/template-rules` (libs/templates/src/template-rules.ts, which imports nothing).
 */
const config = {
  root: here('.'),
  base: '/app/',
  resolve: {
    alias: {
      '@switchboard/engine': here('../../libs/engine/src/index.ts'),
      '@switchboard/template-rules': here('../../libs/templates/src/template-rules.ts'),
    },
  },
  oxc: { jsx: { runtime: 'automatic' } },
  build: {
    outDir: here('../../dist/console'),
    emptyOutDir: true,
    reportCompressedSize: false,
    chunkSizeWarningLimit: 2000,
    rolldownOptions: {
      // two pages: the console, and the embeddable inbox (/embed-chat: its own small bundle, no builder)
      input: { console: here('index.html'), 'embed-chat': here('embed-chat.html') },
      // React Flow's "use client" means nothing without a server renderer; the timings note is noise here.
      onLog(level, log, handler) {
        if (log.code === 'MODULE_LEVEL_DIRECTIVE' || log.code === 'PLUGIN_TIMINGS') return;
        handler(level, log);
      },
    },
  },
  server: {
    fs: { allow: [here('../..')] },
    proxy: { '/v1': 'http://127.0.0.1:3000', '/v2': 'http://127.0.0.1:3000', '/console': 'http://127.0.0.1:3000' },
  },
  logLevel: 'warn',
} satisfies UserConfig;

export default defineConfig(({ command }) => {
  // A build is what ships, whoever runs it. Vite builds for the NODE_ENV it finds, and jest sets NODE_ENV=test for its
  // whole run (its global set-up runs `npm run build`): the browser tests exercised React's development build (slower,
  // StrictMode's double effects, jsxDEV) instead of the production one.
  if (command === 'build') process.env.NODE_ENV = 'production';
  return config;
});
