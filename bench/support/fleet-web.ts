// Browser mode for the scale benchmark: the product's own composition and web server, reaching a demo fleet
// that runs in another process through the ssh config it wrote (PD_CONSOLE_SSH_HOME), connected to its router
// host before printing the URL, so the page opens on the fleet.
//   node --import tsx bench/support/fleet-web.ts --host gpu-a
import { parseArgs } from 'node:util';
import { createApp } from '../../src/main/compose';
import { serveBenchApp } from './serve-bench-app';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { host: { type: 'string', default: 'gpu-a' } } });
  const alias = values.host ?? 'gpu-a';
  const app = createApp({ shell: 'browser' });
  await serveBenchApp(app, 'scale benchmark');
  // Opening 8 hosts takes longer than a web app is given to print its URL: the page loads once this is said.
  await app.handlers.connectHost({ host: { id: alias, label: alias, kind: 'ssh', alias } });
  process.stdout.write('fleet connected\n');
}

void main();
