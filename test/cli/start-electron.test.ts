// `npm start` on a machine that has never downloaded Electron's binary and cannot reach the download: it must
// try Electron's own installer, then end with one message (what failed, which settings help, `npm run web`), a
// non-zero exit and no stack trace — not electron-vite's "Electron uninstall". The electron package is a copy in
// a temp folder (PD_CONSOLE_ELECTRON_DIR) so the shared node_modules/electron is never written to.
import { spawn } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = resolve(__dirname, '..', '..');
const realElectron = dirname(createRequire(join(root, 'package.json')).resolve('electron/package.json'));
const script = join(root, 'scripts', 'start-electron.mjs');
let tmp = '';

/** A copy of the electron package beside links to its dependencies, as npm lays it out, minus path.txt/dist. */
function electronCopy(name: string, engines?: string): string {
  const modules = join(tmp, name, 'node_modules');
  const dir = join(modules, 'electron');
  cpSync(realElectron, dir, {
    recursive: true,
    filter: (src) => !/[/\\](dist|node_modules|path\.txt)$/.test(src.slice(realElectron.length)),
  });
  for (const dep of ['@electron', '@electron-internal']) {
    symlinkSync(join(root, 'node_modules', dep), join(modules, dep));
  }
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const declared = /(\d+)\.(\d+)\.(\d+)/.exec(pkg.engines.node)!.slice(1).map(Number);
  const have = process.versions.node.split('.').map(Number);
  const older = have[0] - declared[0] || have[1] - declared[1] || have[2] - declared[2];
  // On a Node below Electron's own requirement the script rightly stops before the installer; the offline case
  // needs to get past that, so this copy states the running version (the too-old case is its own test).
  if (engines || older < 0) pkg.engines.node = engines ?? `>= ${process.versions.node}`;
  writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg, null, 2));
  return dir;
}

/** A port nothing listens on: connections to it are refused at once. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}

function run(
  cmd: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; out: string }> {
  const clean = { ...process.env };
  for (const k of [
    'ELECTRON_OVERRIDE_DIST_PATH',
    'ELECTRON_EXEC_PATH',
    'ELECTRON_MIRROR',
    'electron_config_cache',
  ])
    delete clean[k];
  return new Promise((done, failed) => {
    const child = spawn(cmd, args, {
      cwd: root,
      env: { ...clean, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', failed);
    child.on('close', (code) => done({ code, out }));
  });
}

beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'pd-start-electron-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('npm start without the Electron binary', () => {
  it('offline: tries the installer, then one message with the reason, the settings and npm run web; exit 1, no stack', async () => {
    const electron = electronCopy('offline');
    const cache = join(tmp, 'empty-cache');
    mkdirSync(cache);
    const sharedPathTxt = existsSync(join(realElectron, 'path.txt'));
    const port = await closedPort();
    const r = await run('npm', ['start'], {
      PD_CONSOLE_ELECTRON_DIR: electron,
      HTTPS_PROXY: `http://127.0.0.1:${port}`,
      ELECTRON_GET_USE_PROXY: '1',
      ELECTRON_MIRROR: `http://127.0.0.1:${port}/`,
      electron_config_cache: cache,
    });
    expect(r.code).not.toBe(0);
    expect(r.out).toContain("fetching it once with Electron's installer");
    expect(r.out).toContain('the desktop app needs the Electron');
    expect(r.out).toMatch(/What failed: .*ECONNREFUSED 127\.0\.0\.1:\d+/);
    for (const hint of [
      'HTTPS_PROXY=',
      'ELECTRON_GET_USE_PROXY=1',
      'ELECTRON_MIRROR=',
      'ELECTRON_OVERRIDE_DIST_PATH=',
      'electron_config_cache=',
      'npm run web',
    ])
      expect(r.out).toContain(hint);
    expect(r.out.match(/could not be downloaded/g)).toHaveLength(1);
    expect(r.out).not.toMatch(/^\s+at /m);
    expect(r.out).not.toContain('Electron uninstall');
    expect(existsSync(join(electron, 'path.txt'))).toBe(false);
    expect(existsSync(join(realElectron, 'path.txt'))).toBe(sharedPathTxt);
  });

  it('on a Node older than Electron needs: says which Node it needs and points to npm run web, before any download', async () => {
    const electron = electronCopy('old-node', '>= 99.0.0');
    const r = await run('npm', ['start'], {
      PD_CONSOLE_ELECTRON_DIR: electron,
      ELECTRON_MIRROR: 'http://127.0.0.1:1/',
    });
    expect(r.code).not.toBe(0);
    expect(r.out).toContain(
      `needs Node.js ≥ 99.0.0 (Electron's requirement); this is Node.js ${process.versions.node}`,
    );
    expect(r.out).toContain('npm run web');
    expect(r.out).not.toContain('fetching it once');
    expect(r.out).not.toMatch(/^\s+at /m);
  });

  it('finds the binary by the same rules as electron/index.js (the e2e suite asks the same question)', async () => {
    const electron = electronCopy('present');
    const which = (env: Record<string, string>) =>
      run(process.execPath, [script, 'which'], { PD_CONSOLE_ELECTRON_DIR: electron, ...env });

    const none = await which({});
    expect(none.code).toBe(1);
    expect(none.out).toContain('path.txt is absent');

    // A stand-in executable: the real binary cannot be downloaded here.
    mkdirSync(join(electron, 'dist'));
    writeFileSync(join(electron, 'dist', 'electron'), '#!/bin/sh\n');
    chmodSync(join(electron, 'dist', 'electron'), 0o755);
    writeFileSync(join(electron, 'path.txt'), 'electron');
    const found = await which({});
    expect(found.code).toBe(0);
    expect(found.out.trim()).toBe(join(electron, 'dist', 'electron'));

    const system = join(tmp, 'system-electron');
    mkdirSync(system);
    const override = await which({ ELECTRON_OVERRIDE_DIST_PATH: system });
    expect(override.code).toBe(1);
    expect(override.out).toContain(`ELECTRON_OVERRIDE_DIST_PATH=${system} has no electron`);
    writeFileSync(join(system, 'electron'), '#!/bin/sh\n');
    expect((await which({ ELECTRON_OVERRIDE_DIST_PATH: system })).out.trim()).toBe(join(system, 'electron'));
  });
});
