// Shared test helpers: temp dirs, a header, and a compact way to write expositions.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32, gunzipSync, gzipSync } from 'node:zlib';
import type { Exposition, MetricType } from '../../src/main/core/probes/exposition/types';
import type { Clock } from '../../src/main/core/clock';
import type { RecordingHeader } from '../../src/main/core/recording';
import type { DeploymentConfig } from '../../src/shared/domain';
import { fleetOfOne } from '../../src/main/core/recording/fleet-of-one';

export async function tempDir(
  prefix = 'pdc-rec-test-',
): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * A 1P1D host as the app names it today (the ids fleetOfServices gives: `router`, `prefill-0`, `decode-0`): the
 * header's deployment and fleet, and `source(role)`, the target and source a role's one service is recorded
 * under (`decode@decode-0`; the host's GPUs `gpu@demo`).
 */
export const ONE_HOST = fleetOfOne({
  host: { id: 'demo', label: 'Demo GPU host', kind: 'demo' },
  deployment: oneHostByRole(),
})!;

/** The same 1P1D as a recording made before services had ids names it: each service by its role. */
export function oneHostByRole(): DeploymentConfig {
  return {
    id: 'demo',
    name: 'Demo PD',
    services: (['prefill', 'decode', 'router'] as const).map((role) => ({
      role,
      hostId: 'demo',
      unit: `sglang-${role}.service`,
      apiUrl: 'http://127.0.0.1:1',
    })),
  };
}

/** A header of the 1P1D host named as today (ONE_HOST). */
export function oneHostHeader(over: Partial<RecordingHeader> = {}): RecordingHeader {
  return header({ deployment: ONE_HOST.deployment, fleet: ONE_HOST.fleet, ...over });
}

export function header(over: Partial<RecordingHeader> = {}): RecordingHeader {
  return {
    sessionId: 'test-session',
    name: 'test session',
    startedAt: Date.UTC(2026, 0, 5, 8, 0, 0),
    host: { id: 'demo', label: 'Demo GPU host', kind: 'demo' },
    deployment: { id: 'demo', name: 'Demo PD', services: [] },
    appVersion: '0.1.0-test',
    ...over,
  };
}

export type SampleSpec = [name: string, labels: Record<string, string>, value: number];
export interface FamilySpec {
  name: string;
  type: MetricType;
  help?: string;
  samples: SampleSpec[];
}

export function exposition(families: FamilySpec[]): Exposition {
  let n = 0;
  return {
    format: 'prometheus',
    families: families.map((f) => ({
      name: f.name,
      type: f.type,
      help: f.help,
      samples: f.samples.map(([name, labels, value]) => {
        n++;
        return { name, labels: { ...labels }, value };
      }),
    })),
    sampleCount: n,
  };
}

/** Cumulative histogram samples from per-bucket counts. */
export function histogram(
  name: string,
  labels: Record<string, string>,
  bounds: number[],
  perBucket: number[],
  sum: number,
): SampleSpec[] {
  const out: SampleSpec[] = [];
  let acc = 0;
  for (let i = 0; i <= bounds.length; i++) {
    acc += perBucket[i] ?? 0;
    out.push([`${name}_bucket`, { ...labels, le: i < bounds.length ? String(bounds[i]) : '+Inf' }, acc]);
  }
  out.push([`${name}_sum`, labels, sum], [`${name}_count`, labels, acc]);
  return out;
}

/** A clock the test moves by hand; timers never fire on their own. */
export function manualClock(start: number): Clock & { set(ms: number): void } {
  let now = start;
  return {
    now: () => now,
    set: (ms: number) => {
      now = ms;
    },
    setTimeout: () => ({ id: 0 }),
    clearTimeout: () => undefined,
  };
}

/** Key of a recorded series for comparisons. */
export const seriesKey = (target: string, name: string, labels: Record<string, string>): string =>
  `${target}|${name}|${JSON.stringify(Object.fromEntries(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1))))}`;

/**
 * Lines of a recording (header first) re-sealed the way a writer of format 1.1 does (docs/recording-format.md §1.1):
 * old `sum` records dropped, one after the header and one at the end. For tests that edit a recording's text.
 */
export function resealed(lines: string[]): string {
  const body = lines.filter((l) => l && !l.startsWith('{"k":"sum",'));
  const seal = (block: string, t: number): string => {
    const b = Buffer.from(block);
    return JSON.stringify({ k: 'sum', t, b: b.length, c: crc32(b) >>> 0 }) + '\n';
  };
  const head = body[0] + '\n';
  const rest = body
    .slice(1)
    .map((l) => l + '\n')
    .join('');
  return head + seal(head, 0) + rest + seal(rest, 0);
}

/**
 * Rewrites a recording written without an overview as a file of an older format minor (1.1–1.3 wrote the same
 * data records; 1.1 as one gzip member, as here): its header says `minor`, its blocks are sealed again.
 */
export async function asOlderMinor(path: string, minor: number): Promise<void> {
  const lines = gunzipSync(await readFile(path))
    .toString('utf8')
    .split('\n');
  const h = JSON.parse(lines[0]) as { minorVersion: number; overview?: unknown };
  if (h.overview) throw new Error(`${path} has an overview: write it with overview: false first`);
  lines[0] = JSON.stringify({ ...h, minorVersion: minor });
  await writeFile(path, gzipSync(resealed(lines)));
}
