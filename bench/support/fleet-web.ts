// Browser mode for the scale benchmark: the product's own composition and web server, reaching a demo fleet
// that runs in another process through the ssh config it wrote (PD_CONSOLE_SSH_HOME), connected to its router
// host before printing the URL, so the page opens on the fleet.
//   node --import tsx bench/support/fleet-web.ts --host gpu-a
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createApp } from '../../src/main/compose';
import { startWebServer } from '../../src/main/web/server';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { host: { type: 'string', default: 'gpu-a' } } });
  const alias = values.host ?? 'gpu-a';
  const app = createApp({ shell: 'browser' });
  const server = await startWebServer({
    handlers: app.handlers,
    bus: app.core,
    rendererDir: join(__dirname, '..', '..', 'out', 'renderer'),
  });
  process.stdout.write(`PD Console (scale benchmark) is serving on 127.0.0.1:${server.port}\n`);
  process.stdout.write(`${server.url}\n`);
  // Opening 8 hosts takes longer than a web app is given to print its URL: the page loads once this is said.
  await app.handlers.connectHost({ host: { id: alias, label: alias, kind: 'ssh', alias } });
  process.stdout.write('fleet connected\n');
  const stop = async (): Promise<void> => {
    await server.close();
    await app.shutdown();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}

void main();
