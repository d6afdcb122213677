// `npm run demo:fleet`: runs the demo fleet in the foreground, writes the SSH config, known_hosts and key an
// operator's ~/.ssh would hold into a folder, and prints how to reach it with ssh and with pd-console.
//   npm run demo:fleet -- [--dir DIR] [--speed N] [--omit gpu-c] [--era E1..E4] [--router ERA]
//                         [--hosts 8 --prefill 8 --decode 24]   (another size; default 3 hosts, 2 prefill, 3 decode)
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DEMO_ERAS, ROUTER_ERAS, type DemoEra, type RouterEra } from './eras';
import { launchDemoFleet } from './fleet';
import {
  DEFAULT_FLEET_SHAPE,
  fleetHostNames,
  fleetShapeProblem,
  isDefaultFleetShape,
  type FleetShape,
} from './topology';

function fail(message: string): never {
  process.stderr.write(`demo:fleet: ${message}\n`);
  process.exit(2);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      dir: { type: 'string' },
      speed: { type: 'string', default: '1' },
      omit: { type: 'string', multiple: true, default: [] },
      era: { type: 'string' },
      router: { type: 'string' },
      hosts: { type: 'string' },
      prefill: { type: 'string' },
      decode: { type: 'string' },
    },
  });
  const shape: FleetShape = {
    hosts: Number(values.hosts ?? DEFAULT_FLEET_SHAPE.hosts),
    prefill: Number(values.prefill ?? DEFAULT_FLEET_SHAPE.prefill),
    decode: Number(values.decode ?? DEFAULT_FLEET_SHAPE.decode),
  };
  const problem = fleetShapeProblem(shape);
  if (problem) fail(`--hosts/--prefill/--decode: ${problem}`);
  const hostNames = fleetHostNames(shape.hosts);
  const speed = Number(values.speed);
  if (!Number.isFinite(speed) || speed < 1 || speed > 1000)
    fail(`--speed needs a number from 1 to 1000 (simulated seconds per second), got "${values.speed}"`);
  const omit = values.omit ?? [];
  for (const h of omit)
    if (!hostNames.includes(h)) fail(`--omit ${h}: not a fleet host; the hosts are ${hostNames.join(', ')}`);
  if (values.era && !(DEMO_ERAS as readonly string[]).includes(values.era))
    fail(`--era ${values.era}: the server eras are ${DEMO_ERAS.join(', ')}`);
  if (values.router && !(ROUTER_ERAS as readonly string[]).includes(values.router))
    fail(`--router ${values.router}: the router eras are ${ROUTER_ERAS.join(', ')}`);
  const dir = path.resolve(values.dir ?? (await mkdtemp(path.join(os.tmpdir(), 'pd-demo-fleet-'))));

  const fleet = await launchDemoFleet({
    speed,
    era: values.era as DemoEra | undefined,
    router: values.router as RouterEra | undefined,
    shape,
  });
  const files = await fleet.writeSshConfig(dir, { omit });
  const units = (name: string): string =>
    fleet
      .host(name)
      .machine.units()
      .map((u) => u.def.name.replace(/\.service$/, ''))
      .join(', ');
  const out = [
    `PD Console demo fleet: a router, ${shape.prefill} prefill and ${shape.decode} decode workers on ${shape.hosts} hosts` +
      (isDefaultFleetShape(shape) ? ' (decode-2 spans gpu-b and gpu-c)' : ''),
    ...(fleet.fallback ? [`  note: ${fleet.fallback}`] : []),
    ...fleet.hosts.map(
      (h) =>
        `  ${h.name}  ${`${h.address}:${h.port}`.padEnd(16)}  ${units(h.name)}${omit.includes(h.name) ? '   (no ssh alias written)' : ''}`,
    ),
    `  router API ${fleet.routerUrl} (as the hosts see it; reach it through any of them)`,
    '',
    `SSH config, known_hosts and client key: ${path.dirname(files.configFile)}`,
    `  ssh -F ${files.configFile} gpu-b systemctl list-units 'sglang-*'`,
    `  PD_CONSOLE_SSH_HOME=${files.home} pd-console status --host gpu-a --json`,
    `  (or from this checkout: PD_CONSOLE_SSH_HOME=${files.home} npm run cli -- status --host gpu-a --json)`,
    '',
    speed === 1 ? 'Running on the wall clock.' : `Running ${speed}× faster than the wall clock.`,
    'Ctrl-C stops it.',
  ];
  process.stdout.write(`${out.join('\n')}\n`);
  const stop = (): void => {
    void fleet.stop().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err: unknown) => fail(err instanceof Error ? (err.stack ?? err.message) : String(err)));
