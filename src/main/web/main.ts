// `npm run web`: PD Console in a browser. The same core as the desktop app, the same built renderer,
// the API carried over a token-guarded WebSocket on 127.0.0.1.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createApp } from '../compose';
import { startWebServer } from './server';

interface WebArgs {
  port: number;
  open: boolean;
  demo: boolean;
  demoSpeed?: number;
}

export function parseWebArgs(argv: string[]): WebArgs {
  const args: WebArgs = { port: 0, open: true, demo: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--no-open') args.open = false;
    else if (a === '--demo') args.demo = true;
    else if (a === '--port' || a === '--demo-speed') {
      const v = Number(argv[++i]);
      if (!Number.isFinite(v) || v < 0)
        throw new Error(`${a} needs a number, got ${JSON.stringify(argv[i])}`);
      if (a === '--port') args.port = v;
      else args.demoSpeed = v;
    } else if (a === '--help' || a === '-h') {
      process.stdout.write('usage: npm run web -- [--demo] [--no-open] [--port N] [--demo-speed X]\n');
      process.exit(0);
    } else throw new Error(`unknown option ${a} (try --help)`);
  }
  return args;
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
  try {
    args = parseWebArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`pd-console web: ${(err as Error).message}\n`);
    process.exit(2);
  }
  const rendererDir = join(__dirname, '../renderer');
  if (!existsSync(join(rendererDir, 'index.html'))) {
    process.stderr.write(
      `pd-console web: no built renderer at ${rendererDir}; run \`npm run build\` first\n`,
    );
    process.exit(1);
  }
  const app = createApp({ shell: 'browser', autoOpenDemo: args.demo, demoSpeed: args.demoSpeed });
  const core = app.core;
  const server = await startWebServer({ handlers: app.handlers, bus: core, rendererDir, port: args.port });
  process.stdout.write(`PD Console (browser mode) is serving on 127.0.0.1:${server.port}\n`);
  process.stdout.write(`${server.url}\n`);
  if (args.demo) {
    core
      .openDemo({})
      .catch((err: Error) => process.stderr.write(`demo deployment failed to open: ${err.message}\n`));
  }
  if (args.open) openBrowser(server.url);
  const stop = async (): Promise<void> => {
    await server.close();
    await app.shutdown();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}

void main();
