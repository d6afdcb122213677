// Runs the demo host on its own, as a stand-in for a real GPU host: `ssh -p PORT -i KEY operator@127.0.0.1`
// works against it, and so does PD Console's "Add host". Prints one JSON line with what a client needs.
//   npx tsx --tsconfig tsconfig.node.json scripts/demo-host.ts [--speed N] [--dir DIR]
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acceleratedClock } from '../src/main/core/clock';
import { startDemoHost } from '../src/main/demo';

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const speed = Number(args[args.indexOf('--speed') + 1] ?? 1) || 1;
  const dir = args.includes('--dir')
    ? args[args.indexOf('--dir') + 1]
    : mkdtempSync(join(tmpdir(), 'pdc-demo-host-'));
  mkdirSync(dir, { recursive: true });
  const host = await startDemoHost({ clock: acceleratedClock(speed) });
  const keyFile = join(dir, 'id_demo');
  writeFileSync(keyFile, host.clientPrivateKey, { mode: 0o600 });
  process.stdout.write(
    JSON.stringify({
      host: host.host,
      port: host.port,
      user: host.username,
      keyFile,
      hostKeyLine: host.hostKeyLine,
    }) + '\n',
  );
  const stop = (): void => void host.stop().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

void main();
