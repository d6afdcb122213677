// The demo GPU host in a process of its own (benchmarks measure the core without the simulation's cost):
// prints one JSON line with how to reach it, stops on SIGTERM.
import { startDemoHost } from '../../src/main/demo';

void startDemoHost({}).then((demo) => {
  process.stdout.write(
    JSON.stringify({
      host: demo.host,
      port: demo.port,
      username: demo.username,
      clientPrivateKey: demo.clientPrivateKey,
      hostKeyPublic: demo.hostKeyPublic.toString('base64'),
      deployment: demo.deployment,
      era: demo.sim.era,
      router: demo.sim.routerEra,
    }) + '\n',
  );
  const stop = (): void => void demo.stop().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
});
