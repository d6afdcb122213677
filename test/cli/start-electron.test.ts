// `npm start` on a machine that has never downloaded Electron's binary. Offline it must try Electron's own
// installer, then end with one message (what failed, which settings help, `npm run web`), a non-zero exit and no
// stack trace — not electron-vite's "Electron uninstall". With a mirror that has the binary (a local server with
// a stand-in, since the real one cannot be fetched here) it downloads once and electron-vite starts that binary.
// The electron package is a copy in a temp folder (PD_CONSOLE_ELECTRON_DIR): the shared node_modules/electron is
// never written to.
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
import { createHash } from 'node:crypto';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { crc32 } from 'node:zlib';
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

/** A zip with stored (uncompressed) entries and Unix modes: the shape of Electron's release zips, minus size. */
function zipOf(files: Array<{ name: string; data: Buffer; mode: number }>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const f of files) {
    const name = Buffer.from(f.name);
    const crc = crc32(f.data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(f.data.length, 18);
    local.writeUInt32LE(f.data.length, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4); // made by Unix, so the external attributes carry the mode
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(f.data.length, 20);
    central.writeUInt32LE(f.data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(((0o100000 | f.mode) << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, f.data);
    centrals.push(central, name);
    offset += local.length + name.length + f.data.length;
  }
  const dir = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(dir.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, dir, end]);
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
  // Nothing from the machine's own Electron, proxy or npm settings may steer the download under test.
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) =>
        !/^(electron_|npm_config_electron_|npm_config_(https?-)?proxy$|(https?|no|all)_proxy$)/i.test(k),
    ),
  );
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
    const proxy = await closedPort();
    const r = await run('npm', ['start'], {
      PD_CONSOLE_ELECTRON_DIR: electron,
      HTTPS_PROXY: `http://127.0.0.1:${proxy}`,
      HTTP_PROXY: `http://127.0.0.1:${proxy}`,
      ELECTRON_GET_USE_PROXY: '1',
      ELECTRON_MIRROR: `http://127.0.0.1:${await closedPort()}/`,
      electron_config_cache: cache,
    });
    expect(r.code).not.toBe(0);
    expect(r.out).toContain("fetching it once (about 100 MB) with Electron's installer");
    expect(r.out).toContain('the desktop app needs the Electron');
    // The request went to the proxy, as ELECTRON_GET_USE_PROXY asks, and the message says it was refused there.
    expect(r.out).toMatch(
      new RegExp(`What failed: fetch failed: connect ECONNREFUSED 127\\.0\\.0\\.1:${proxy} \\(http`),
    );
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

  it('with a mirror that has it: fetches it once through the installer, then electron-vite starts that binary', async () => {
    if (process.platform !== 'linux') return; // the stand-in binary below is a shell script
    const electron = electronCopy('mirror');
    const version = JSON.parse(readFileSync(join(electron, 'package.json'), 'utf8')).version as string;
    const zipName = `electron-v${version}-linux-${process.arch}.zip`;
    const ran = join(tmp, 'stand-in-ran.txt');
    // A stand-in for the real binary (which cannot be downloaded here): it records how it was started.
    const zip = zipOf([
      { name: 'electron', data: Buffer.from(`#!/bin/sh\necho "$@" >> '${ran}'\nexit 0\n`), mode: 0o755 },
      { name: 'version', data: Buffer.from(version), mode: 0o644 },
    ]);
    const requests: string[] = [];
    const mirror = createHttpServer((req, res) => {
      requests.push(req.url ?? '');
      if (req.url === `/v${version}/${zipName}`) return res.end(zip);
      if (req.url === `/v${version}/SHASUMS256.txt`)
        return res.end(`${createHash('sha256').update(zip).digest('hex')} *${zipName}\n`);
      res.statusCode = 404;
      res.end();
    });
    await new Promise<void>((r) => mirror.listen(0, '127.0.0.1', r));
    const port = (mirror.address() as { port: number }).port;
    const cache = join(tmp, 'mirror-cache');
    mkdirSync(cache);
    try {
      const env = {
        PD_CONSOLE_ELECTRON_DIR: electron,
        ELECTRON_MIRROR: `http://127.0.0.1:${port}/`,
        // The stand-in is not in Electron's bundled checksums.json: check it against the mirror's list.
        electron_use_remote_checksums: '1',
        electron_config_cache: cache,
      };
      const first = await run('npm', ['start'], env);
      expect(first.out).toContain("fetching it once (about 100 MB) with Electron's installer");
      expect(first.code).toBe(0);
      expect(readFileSync(join(electron, 'path.txt'), 'utf8')).toBe('electron');
      expect(readFileSync(ran, 'utf8').trim()).toBe('.');
      // Second start: the binary is there, so no download (the build is reused).
      const second = await run('npm', ['start', '--', '--skipBuild'], env);
      expect(second.code).toBe(0);
      expect(second.out).not.toContain('fetching it once');
      expect(readFileSync(ran, 'utf8').trim().split('\n')).toEqual(['.', '.']);
      expect(requests.filter((u) => u.endsWith('.zip'))).toEqual([`/v${version}/${zipName}`]);
    } finally {
      mirror.close();
    }
  }, 120_000);
});
