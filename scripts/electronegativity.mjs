// Runs electronegativity over src/ and fails on any finding not accepted (with a reason) in
// security/electronegativity-accepted.json. electronegativity itself exits 0 whatever it finds.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const out = join(mkdtempSync(join(tmpdir(), 'eng-')), 'out.sarif');
const bin = join(root, 'node_modules', '@doyensec', 'electronegativity', 'dist', 'index.js');
const electron = JSON.parse(
  readFileSync(join(root, 'node_modules', 'electron', 'package.json'), 'utf8'),
).version;
// Offline it spends ~10 s failing to fetch translations and release lists; that noise goes to a pipe.
execFileSync(process.execPath, [bin, '-i', join(root, 'src'), '-o', out, '-e', electron, '-v', 'false'], {
  stdio: ['ignore', 'pipe', 'pipe'],
});
const sarif = JSON.parse(readFileSync(out, 'utf8'));
const accepted = JSON.parse(
  readFileSync(join(root, 'security', 'electronegativity-accepted.json'), 'utf8'),
).accepted;
for (const a of accepted)
  if (!a.reason?.trim()) throw new Error(`accepted finding ${a.check} in ${a.file} has no reason`);

const findings = sarif.runs[0].results.map((r) => {
  const loc = r.locations[0].physicalLocation;
  return {
    check: r.ruleId,
    file: relative(root, loc.artifactLocation.uri.replace(/^file:\/\//, '')),
    line: loc.region?.startLine,
  };
});
const open = findings.filter((f) => !accepted.some((a) => a.check === f.check && a.file === f.file));
const stale = accepted.filter((a) => !findings.some((f) => a.check === f.check && a.file === f.file));
console.log(
  `electronegativity ${electron}: ${findings.length} findings, ${findings.length - open.length} accepted with a reason`,
);
for (const s of stale)
  console.log(`  note: accepted ${s.check} in ${s.file} no longer occurs; remove it from the list`);
if (open.length) {
  for (const f of open) console.error(`  NOT ACCEPTED: ${f.check} at ${f.file}:${f.line}`);
  console.error('Fix these, or accept them with a reason in security/electronegativity-accepted.json.');
  process.exit(1);
}
