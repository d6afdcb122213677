// Runs npm scripts as the stages of one command (`npm test`), printing each stage's wall time as it ends and
// all of them at the end, so a slow stage shows where it is. Stages run in the order given and stop at the first
// failure; `a+b` runs a and b side by side (their output is held and printed whole as each ends, so it does not
// interleave). Usage: node scripts/stages.mjs lint+typecheck build test:unit
import { spawn } from 'node:child_process';

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const groups = process.argv.slice(2).map((g) => g.split('+'));
if (groups.length === 0) {
  console.error('usage: node scripts/stages.mjs <script>[+<script>…] …  (npm scripts, in order)');
  process.exit(2);
}

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

/** Runs `npm run <name>`; `hold`: collect its output and print it when it ends. Resolves with its exit code. */
function run(name, hold) {
  return new Promise((resolve) => {
    const started = Date.now();
    const out = [];
    const child = spawn(npm, ['run', '--silent', name], {
      stdio: hold ? ['ignore', 'pipe', 'pipe'] : 'inherit',
    });
    if (hold) for (const s of [child.stdout, child.stderr]) s.on('data', (d) => out.push(d));
    child.on('error', (err) => {
      console.error(`=== ${name}: could not start npm (${err.message}); is npm on PATH?`);
      resolve({ name, code: 1, ms: Date.now() - started });
    });
    child.on('close', (code, signal) => {
      if (hold) process.stdout.write(Buffer.concat(out));
      const ms = Date.now() - started;
      const how = code === 0 ? '' : signal ? ` — killed by ${signal}` : ` — FAILED (exit ${code})`;
      console.log(`=== ${name}: ${seconds(ms)}${how}`);
      resolve({ name, code: code ?? 1, ms });
    });
  });
}

const all = Date.now();
const done = [];
let failed = null;
for (const group of groups) {
  console.log(`=== ${group.join(' + ')}`);
  const results = await Promise.all(group.map((name) => run(name, group.length > 1)));
  done.push(...results);
  failed = results.find((r) => r.code !== 0) ?? null;
  if (failed) break;
}
console.log('\n=== stage times');
for (const r of done)
  console.log(`  ${r.name.padEnd(16)} ${seconds(r.ms).padStart(9)}${r.code ? '  FAILED' : ''}`);
console.log(`  ${'total'.padEnd(16)} ${seconds(Date.now() - all).padStart(9)}`);
if (failed) {
  const skipped = groups.flat().filter((n) => !done.some((r) => r.name === n));
  if (skipped.length) console.log(`  not run after the failure of ${failed.name}: ${skipped.join(', ')}`);
  process.exit(failed.code || 1);
}
