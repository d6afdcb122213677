// `pd-console open FILE [--json]`: offline review for terminals — what a recording holds (name, host,
// deployment, time span, series, journal) and its events with their times, plus what was lost if the file was
// cut short or damaged, and where its overview or index is damaged. Values are not decoded, so a day-long
// recording answers in seconds.
import { stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { FILE_EXTENSION, RecordingOpenError, readRecording } from '../core/recording';
import { readSidecar } from '../core/review/sidecar';
import type { CliIo } from './cli-io';
import { defineCommand, parseCommandLine, usageText, UsageError } from './cli-args';
import { oneLine } from '@shared/display-text';

export const OPEN_USAGE = 'usage: pd-console open FILE.pdrec.jsonl.gz [--json] [--events N]';

const MAX_TEXT_EVENTS = 200;

export const OPEN_COMMAND = defineCommand({
  name: 'open',
  usage: OPEN_USAGE,
  options: { json: { type: 'boolean' }, events: { type: 'string', needs: 'a whole number' } },
});

export async function openCommand(argv: string[], io: CliIo): Promise<number> {
  let parsed;
  try {
    parsed = parseCommandLine(OPEN_COMMAND, argv);
  } catch (err) {
    if (err instanceof UsageError) return usage(io, err.message);
    throw err;
  }
  if (parsed.help) {
    io.stdout(`${OPEN_USAGE}\nPrints what a recorded session holds and its events; --json for scripts.\n`);
    return 0;
  }
  const json = parsed.values.json === true;
  const maxEvents = parsed.values.events === undefined ? MAX_TEXT_EVENTS : Number(parsed.values.events);
  if (!Number.isInteger(maxEvents) || maxEvents < 0) return usage(io, '--events needs a whole number');
  const [file, extra] = parsed.positionals;
  if (extra !== undefined) return usage(io, `one file at a time (got ${JSON.stringify(extra)} too)`);
  if (!file) return usage(io, 'which recording? give its path');

  const byTarget = new Map<string, { series: number; families: Set<string> }>();
  let rec;
  try {
    // No series kept: only the dictionary is counted, values are skipped (several times faster).
    rec = await readRecording(file, {
      series: (s) => {
        let t = byTarget.get(s.target);
        if (!t) byTarget.set(s.target, (t = { series: 0, families: new Set() }));
        t.series++;
        t.families.add(s.family);
        return false;
      },
    });
  } catch (err) {
    const e = err as Error;
    io.stderr(`pd-console open: ${e.message}\n`);
    if (err instanceof RecordingOpenError && err.code === 'newer-version')
      io.stderr('hint: update PD Console to read it.\n');
    else if (err instanceof RecordingOpenError && err.code === 'not-a-recording')
      io.stderr(`hint: recordings are ${FILE_EXTENSION} files written by PD Console.\n`);
    return 1;
  }
  const size = (await stat(file)).size;
  // A session in a recordings folder may have been renamed or annotated later (its sidecar).
  const id = basename(file).endsWith(FILE_EXTENSION) ? basename(file).slice(0, -FILE_EXTENSION.length) : null;
  const side = id ? await readSidecar(dirname(file), id) : { annotations: [], warning: null };
  const notes = side.annotations.map((a) => ({
    id: a.id,
    ts: a.ts,
    kind: 'annotation' as const,
    severity: 'info' as const,
    title: a.text,
  }));
  const events = [...rec.events, ...notes].sort((a, b) => a.ts - b.ts);
  const warnings = side.warning ? [...rec.warnings, side.warning] : rec.warnings;
  const h = rec.header;
  const totalSeries = [...byTarget.values()].reduce((n, t) => n + t.series, 0);
  const summary = {
    path: file,
    name: side.name ?? h.name,
    sessionId: h.sessionId,
    host: h.host,
    deployment: {
      id: h.deployment.id,
      name: h.deployment.name,
      services: h.deployment.services.map((s) => ({ role: s.role, unit: s.unit, hostId: s.hostId })),
    },
    appVersion: h.appVersion,
    formatVersion: `${h.version}.${h.minorVersion}`,
    firstTs: rec.firstTs,
    lastTs: rec.lastTs,
    firstIso: iso(rec.firstTs),
    lastIso: iso(rec.lastTs),
    durationMs: rec.lastTs - rec.firstTs,
    closedCleanly: rec.closedCleanly,
    sizeBytes: size,
    series: {
      total: totalSeries,
      byTarget: Object.fromEntries(
        [...byTarget].map(([t, v]) => [t, { series: v.series, families: v.families.size }]),
      ),
    },
    scrapes: rec.stats.scrapes,
    samples: rec.stats.samples,
    unitStateChanges: rec.unitStates.length,
    healthChanges: rec.health.length,
    journalLines: rec.journal.length,
    events: events.map((e) => ({
      ts: e.ts,
      iso: iso(e.ts),
      kind: e.kind,
      severity: e.severity,
      ...('role' in e && e.role ? { role: e.role } : {}),
      title: e.title,
      ...('detail' in e && e.detail ? { detail: e.detail } : {}),
    })),
    warnings,
    // Damage to what only makes opening fast (overview, index), located: the data is not affected by it.
    derivedDamage: rec.derivedDamage.map((d) => ({
      section: d.section,
      at: d.at,
      span: d.span,
      what: d.what,
    })),
  };
  if (json) {
    io.stdout(`${JSON.stringify(summary, null, 2)}\n`);
    return 0;
  }
  const lines: string[] = [];
  // Everything below came from the file (labels, names, titles, warnings): each stays on its own line.
  const row = (k: string, v: string): number => lines.push(`${k.padEnd(12)}${oneLine(v)}`);
  lines.push(oneLine(summary.name));
  row('file', `${file} (${mib(size)}, ${rec.closedCleanly ? 'complete' : 'NOT closed properly'})`);
  row('host', `${h.host.label}${h.host.hostname ? ` (${h.host.hostname})` : ''} [${h.host.kind}]`);
  row(
    'deployment',
    `${h.deployment.name}: ${h.deployment.services.map((s) => `${s.role} ${s.unit}`).join(', ') || 'no services recorded'}`,
  );
  row('recorded', `${summary.firstIso} → ${summary.lastIso} (${duration(summary.durationMs)})`);
  row(
    'series',
    `${totalSeries} (${[...byTarget].map(([t, v]) => `${t} ${v.series} in ${v.families.size} families`).join(', ')}); ${rec.stats.scrapes} scrapes, ${rec.stats.samples} samples`,
  );
  row('states', `${rec.unitStates.length} unit state changes, ${rec.health.length} health changes`);
  row('journal', `${rec.journal.length} lines`);
  row('events', String(events.length));
  for (const e of summary.events.slice(0, maxEvents))
    lines.push(
      `  ${e.iso}  ${oneLine(`${e.kind.padEnd(12)} ${e.severity.padEnd(7)} ${(('role' in e && e.role) || '-').padEnd(7)} ${e.title}`)}`,
    );
  if (events.length > maxEvents)
    lines.push(`  … ${events.length - maxEvents} more (--events N to show more, --json for all)`);
  if (warnings.length) {
    lines.push('warnings:');
    for (const w of warnings) lines.push(`  - ${oneLine(w)}`);
  }
  io.stdout(`${lines.join('\n')}\n`);
  return 0;
}

function usage(io: CliIo, why: string): number {
  io.stderr(usageText(OPEN_COMMAND, why));
  return 2;
}

function iso(ms: number): string {
  return Number.isFinite(ms) ? new Date(ms).toISOString() : 'unknown';
}

function mib(b: number): string {
  return b >= 1024 * 1024
    ? `${(b / 1024 / 1024).toFixed(1)} MiB`
    : `${Math.max(1, Math.round(b / 1024))} KiB`;
}

function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h ? `${h}h ${m}m ${s % 60}s` : m ? `${m}m ${s % 60}s` : `${s}s`;
}
