// A demo fleet and an app that reaches it through the ssh config the fleet writes (as an operator's machine
// would), in a temporary folder; both are stopped and the folder removed after each test.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { createApp, type App, type AppOptions } from '../../src/main/compose';
import { startDemoFleet, type DemoFleet, type DemoFleetOptions } from '../../src/main/demo/fleet';
import type { FleetHostName } from '../../src/main/demo/topology';

export interface FleetApp {
  fleet: DemoFleet;
  app: App;
  /** The temporary folder (the app's data is in `data/`, the ssh config in `home/`). */
  dir: string;
}

export interface FleetAppOptions {
  fleet: DemoFleetOptions;
  /** The app's options beside the folders: a browser-mode app by default. */
  app?: Partial<AppOptions>;
  /** Hosts left out of the ssh config (their workers cannot be placed). */
  omit?: FleetHostName[];
}

/** Registers the cleanup (call at module level) and returns the opener. */
export function fleetApps(prefix: string): (opts: FleetAppOptions) => Promise<FleetApp> {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  return async (opts) => {
    const fleet = await startDemoFleet(opts.fleet);
    const dir = mkdtempSync(join(tmpdir(), `pd-${prefix}-`));
    cleanups.push(async () => {
      await fleet.stop();
      rmSync(dir, { recursive: true, force: true });
    });
    const files = await fleet.writeSshConfig(join(dir, 'home'), { omit: opts.omit });
    const app = createApp({
      shell: 'browser',
      dataDir: join(dir, 'data'),
      homeDir: files.home,
      ...opts.app,
    });
    cleanups.push(() => app.shutdown());
    return { fleet, app, dir };
  };
}
