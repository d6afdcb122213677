import { resolve } from 'node:path';
import { defineConfig } from 'electron-vite';
import react from '@vitejs/plugin-react';

const shared = { '@shared': resolve(__dirname, 'src/shared') };

export default defineConfig({
  main: {
    resolve: { alias: shared },
    build: {
      rollupOptions: {
        // One bundle per shell: the Electron app, browser mode and the CLI all share the same core.
        input: {
          index: resolve(__dirname, 'src/main/index.ts'),
          web: resolve(__dirname, 'src/main/web/main.ts'),
          cli: resolve(__dirname, 'src/main/cli/main.ts'),
        },
      },
    },
  },
  preload: {
    resolve: { alias: shared },
    // The preload runs sandboxed: it cannot require() anything, so nothing may be externalized.
    build: { externalizeDeps: false },
  },
  renderer: {
    resolve: { alias: { ...shared, '@renderer': resolve(__dirname, 'src/renderer/src') } },
    plugins: [react()],
  },
});
