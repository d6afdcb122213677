// `npm run web`: PD Console in a browser. The same core as the desktop app, the same built renderer,
// the API carried over a token-guarded WebSocket on 127.0.0.1.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createApp } from '../compose';
import { startWebServer } from './server';
import { tuneGarbageCollector } from '../gc-tuning';
import { usageText, UsageError } from '../cli/cli-args';
import { parseWebArgs, WEB_COMMAND, type WebArgs } from './web-args';

/** How long SIGTERM / Ctrl-C may take before the process exits anyway. */
const STOP_DEADLINE_MS = 5000;

/** The token from PD_CONSOLE_WEB_TOKEN, or undefined for a fresh random one. */
export function tokenFromEnv(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^[A-Za-z0-9_-]{16,}$/.test(value))
    throw new Error(
      'PD_CONSOLE_WEB_TOKEN must be at least 16 characters of A-Z a-z 0-9 - _ (it goes into the URL unescaped)',
    );
  return value;
}

function openBrowser(url: string): void {
  const cmd = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'cmd' : 'xdg-open';
  const argv = process.platform === 'win32' ? ['/c', 'start', '""', url] : [url];
  const child = spawn(cmd, argv, { stdio: 'ignore', detached: true });
  child.on('error', () =>
    process.stderr.write(`could not open a browser (${cmd}); open the URL above yourself\n`),
  );
  child.unref();
}

async function main(): Promise<void> {
  let args: WebArgs;
  let token: string | undefined;
  try {
    const parsed = parseWebArgs(process.argv.slice(2));
    if (parsed === 'help') {
      process.stdout.write(WEB_COMMAND.usage);
      process.exit(0);
    }
    args = parsed;
    token = tokenFromEnv(process.env.PD_CONSOLE_WEB_TOKEN);
  } catch (err) {
    const why = (err as Error).message;
    process.stderr.write(
      err instanceof UsageError ? usageText(WEB_COMMAND, why) : `pd-console web: ${why}\n`,
    );
    process.exit(2);
  }
  const rendererDir = join(__dirname, '../renderer');
  if (!existsSync(join(rendererDir, 'index.html'))) {
    process.stderr.write(
      `pd-console web: no built renderer at ${rendererDir}; run \`npm run build\` first\n`,
    );
    process.exit(1);
  }
  tuneGarbageCollector();
  const app = createApp({
    shell: 'browser',
    autoOpenDemo: args.demo,
    demoSpeed: args.demoSpeed,
    demoModelLoadMs: args.demoModelLoadMs,
    demoEra: args.demoEras.era,
    demoRouterEra: args.demoEras.router,
  });
  const core = app.core;
  let server: Awaited<ReturnType<typeof startWebServer>>;
  try {
    server = await startWebServer({
      handlers: app.handlers,
      bus: core,
      rendererDir,
      exportsDir: app.exportDir,
      port: args.port,
      token,
    });
  } catch (err) {
    process.stderr.write(`pd-console web: ${(err as Error).message}\n`);
    await app.shutdown().catch(() => undefined);
    process.exit(1);
  }
  process.stdout.write(`PD Console (browser mode) is serving on 127.0.0.1:${server.port}\n`);
  process.stdout.write(`${server.url}\n`);
  if (args.demo) {
    core
      .openDemo(args.demoEras)
      .catch((err: Error) => process.stderr.write(`demo deployment failed to open: ${err.message}\n`));
  }
  if (args.open) openBrowser(server.url);
  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) {
      process.stderr.write(`pd-console web: ${signal} again; exiting now\n`);
      process.exit(1);
    }
    stopping = true;
    const started = Date.now();
    // Whatever a client or a host does, the process ends: after the deadline it exits with what it has.
    // Not unref'd: it also keeps the process alive while shutdown waits only on unref'd timers, which would
    // otherwise let Node exit silently half-way (before "stopped" is printed).
    setTimeout(() => {
      process.stderr.write(
        `pd-console web: shutdown did not finish within ${STOP_DEADLINE_MS / 1000} s; exiting anyway ` +
          '(an unclosed recording loses at most its last 5 s)\n',
      );
      process.exit(1);
    }, STOP_DEADLINE_MS);
    // Both run whatever the other does: the recording is closed even if a socket misbehaves.
    const results = await Promise.allSettled([server.close(), app.shutdown()]);
    for (const r of results)
      if (r.status === 'rejected')
        process.stderr.write(`pd-console web: shutdown step failed: ${(r.reason as Error).message}\n`);
    const code = results.some((r) => r.status === 'rejected') ? 1 : 0;
    // Exit once the line is out: a pipe (a supervisor, a test) would otherwise lose it.
    process.stdout.write(`pd-console web: stopped in ${Date.now() - started} ms\n`, () => process.exit(code));
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

void main();
