import { resolve } from 'node:path';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: { alias: { '@shared': resolve(__dirname, 'src/shared') } },
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two cores: SSH servers, sshd and simulations in parallel files fight for CPU; keep it modest.
    maxWorkers: 2,
    // Each file still runs in a fresh worker of its own (isolate), but a thread starts and imports faster than a
    // child process. No test changes the working directory, the umask or process-wide signal handlers (a thread
    // cannot); a test's process.env changes stay in its own thread, as they stayed in its own process.
    pool: 'threads',
    reporters: ['default'],
  },
});
