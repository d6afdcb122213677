// `npm start` / `npm run dev`: makes sure the Electron binary is there, then runs electron-vite.
//
// Electron ≥ 42 no longer downloads its binary at install time (and npm 11 does not run install scripts anyway);
// it writes node_modules/electron/path.txt only after its first-use download. electron-vite reads path.txt without
// triggering that download, so on a fresh clone it stops with "Electron uninstall". This script runs Electron's own
// idempotent installer (node_modules/electron/install.js, the `install-electron` bin) when the binary is missing and
// hands the binary to electron-vite through ELECTRON_EXEC_PATH. Where the download cannot happen it says why and
// what to do, in one message, with no stack trace.
//
//   node scripts/start-electron.mjs preview|dev [electron-vite args…]
//   node scripts/start-electron.mjs which      prints the binary's path (exit 0) or why there is none (exit 1)
//
// PD_CONSOLE_ELECTRON_DIR points at another copy of the electron package (tests use it so that the shared
// node_modules/electron is never written to). Keep this file plain ESM that old Node can parse: the Node version
// check below must get to print its message.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'package.json'));

// Used only when Electron's package.json cannot be read; Electron 45 declares ">= 22.12.0".
const FALLBACK_DESKTOP_NODE = '22.12.0';

export function electronDir(env = process.env) {
  if (env.PD_CONSOLE_ELECTRON_DIR) return resolve(env.PD_CONSOLE_ELECTRON_DIR);
  return dirname(require.resolve('electron/package.json'));
}

function electronPackage(dir) {
  return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
}

/** The lowest Node version Electron's package declares (its engines range is a plain ">= x.y.z"). */
export function requiredNode(dir) {
  try {
    const m = /(\d+)\.(\d+)(?:\.(\d+))?/.exec(electronPackage(dir).engines?.node ?? '');
    if (m) return `${m[1]}.${m[2]}.${m[3] ?? 0}`;
  } catch {
    // An unreadable package is reported by the binary check; the version check falls back.
  }
  return FALLBACK_DESKTOP_NODE;
}

export function versionAtLeast(have, want) {
  const a = have.replace(/^v/, '').split('.').map(Number);
  const b = want.split('.').map(Number);
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  return true;
}

function platformExecutable() {
  if (process.platform === 'darwin') return 'Electron.app/Contents/MacOS/Electron';
  return process.platform === 'win32' ? 'electron.exe' : 'electron';
}

/**
 * Where the Electron executable is, by the same rules as electron/index.js (ELECTRON_OVERRIDE_DIST_PATH, else
 * dist/<path.txt>), with electron-vite's own ELECTRON_EXEC_PATH first. `missing` says why when there is none.
 */
export function locateElectron(env = process.env) {
  if (env.ELECTRON_EXEC_PATH) {
    return existsSync(env.ELECTRON_EXEC_PATH)
      ? { binary: env.ELECTRON_EXEC_PATH, source: 'ELECTRON_EXEC_PATH' }
      : { missing: `ELECTRON_EXEC_PATH=${env.ELECTRON_EXEC_PATH} does not exist`, fixedByDownload: false };
  }
  const dir = electronDir(env);
  const pathTxt = join(dir, 'path.txt');
  const recorded = existsSync(pathTxt) ? readFileSync(pathTxt, 'utf8').trim() : '';
  if (env.ELECTRON_OVERRIDE_DIST_PATH) {
    const binary = join(env.ELECTRON_OVERRIDE_DIST_PATH, recorded || platformExecutable());
    return existsSync(binary)
      ? { binary, source: 'ELECTRON_OVERRIDE_DIST_PATH' }
      : {
          missing: `ELECTRON_OVERRIDE_DIST_PATH=${env.ELECTRON_OVERRIDE_DIST_PATH} has no ${recorded || platformExecutable()}`,
          fixedByDownload: false,
        };
  }
  if (!recorded) return { missing: `${pathTxt} is absent`, fixedByDownload: true };
  const binary = join(dir, 'dist', recorded);
  return existsSync(binary)
    ? { binary, source: 'node_modules' }
    : { missing: `${binary} is absent`, fixedByDownload: true };
}

// Runs install.js in a child whose error text is one line with its causes: install.js prints `err.stack`, and
// for a network failure that is only "TypeError: fetch failed", the cause (ECONNREFUSED, ENOTFOUND, a proxy's
// answer) and the URL being the useful part.
const INSTALL_WITH_ONE_LINE_ERRORS = `
let url = '';
const realFetch = globalThis.fetch;
globalThis.fetch = (u, o) => { url = String(u); return realFetch(u, o); };
const describe = (e, depth = 0) => {
  if (!e || depth > 4) return '';
  if (e.errors?.length) return describe(e.errors[0], depth + 1); // AggregateError: one per address tried
  const code = e.code && !String(e.message).includes(e.code) ? e.code + ' ' : '';
  const own = code + (e.message || e.code || String(e));
  return e.cause ? own + ': ' + describe(e.cause, depth + 1) : own;
};
Error.prepareStackTrace = (e) => {
  const text = describe(e);
  return url && !text.includes(url) ? text + ' (' + url + ')' : text;
};
require(process.argv[1]);
`;

function runElectronInstaller(dir, env) {
  const installer = join(dir, 'install.js');
  const child = spawnSync(process.execPath, ['-e', INSTALL_WITH_ONE_LINE_ERRORS, installer], {
    cwd: dir,
    env: { ...env, ELECTRON_GET_NO_PROGRESS: '1' },
    stdio: ['ignore', 'inherit', 'pipe'],
    encoding: 'utf8',
  });
  if (child.status === 0) return null;
  const lines = (child.stderr || String(child.error ?? '')).split('\n').map((l) => l.trim());
  return lines.filter(Boolean).pop() || `install.js exited with ${child.status ?? child.signal}`;
}

function fail(lines) {
  process.stderr.write(lines.join('\n') + '\n');
  process.exit(1);
}

function downloadFailedMessage(version, reason, again) {
  return [
    '',
    `PD Console: the desktop app needs the Electron ${version} binary, and it could not be downloaded.`,
    `  What failed: ${reason}`,
    `  What helps, then run \`${again}\` again:`,
    `    behind a proxy      HTTPS_PROXY=http://proxy:port ELECTRON_GET_USE_PROXY=1 ${again}`,
    `    from a mirror       ELECTRON_MIRROR=https://your-mirror/electron/ ${again}`,
    `    a system Electron   ELECTRON_OVERRIDE_DIST_PATH=/folder/holding/the/electron/executable ${again}`,
    `    a copied cache      electron_config_cache=/copy/of/a/machine's/.cache/electron ${again}  (one that has downloaded Electron ${version})`,
    '  Run the same app in your browser now, no Electron needed:  npm run web',
    '',
  ];
}

function main(argv) {
  const [mode, ...rest] = argv;
  if (mode !== 'preview' && mode !== 'dev' && mode !== 'which') {
    fail(['usage: node scripts/start-electron.mjs preview|dev|which [electron-vite args…]']);
  }
  if (mode === 'which') {
    const found = locateElectron();
    if (found.binary) process.stdout.write(found.binary + '\n');
    else process.stdout.write(`no Electron binary: ${found.missing}\n`);
    process.exit(found.binary ? 0 : 1);
  }

  let dir;
  try {
    dir = electronDir();
  } catch {
    fail(['', 'PD Console: node_modules/electron is missing: run `npm install` first.', '']);
  }
  const need = requiredNode(dir);
  if (!versionAtLeast(process.versions.node, need)) {
    fail([
      '',
      `PD Console: the desktop app needs Node.js ≥ ${need} (Electron's requirement); this is Node.js ${process.versions.node}.`,
      '  Install a newer Node.js (e.g. `nvm install 22`), or run the same app in your browser now,',
      '  which needs only Node.js ≥ 20.19:  npm run web',
      '',
    ]);
  }

  let found = locateElectron();
  if (!found.binary && found.fixedByDownload) {
    const version = electronPackage(dir).version;
    process.stdout.write(
      `Electron ${version} has not been downloaded on this machine yet (${found.missing}); ` +
        "fetching it once (about 100 MB) with Electron's installer…\n",
    );
    const reason = runElectronInstaller(dir, process.env);
    if (reason) fail(downloadFailedMessage(version, reason, mode === 'dev' ? 'npm run dev' : 'npm start'));
    found = locateElectron();
  }
  if (!found.binary) {
    fail([
      '',
      `PD Console: no Electron binary to start: ${found.missing}.`,
      '  Fix that setting, or run the same app in your browser now:  npm run web',
      '',
    ]);
  }

  const electronVite = join(
    dirname(require.resolve('electron-vite/package.json')),
    'bin',
    'electron-vite.js',
  );
  const child = spawn(process.execPath, [electronVite, mode, ...rest], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, ELECTRON_EXEC_PATH: found.binary },
  });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  main(process.argv.slice(2));
