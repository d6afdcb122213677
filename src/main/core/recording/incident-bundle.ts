// Incident bundle: one .tar.gz an operator can attach to a ticket — the session recording, the unit files, the
// journal window and metrics snapshots, every one of them passed through redactSecrets, plus a manifest that
// says what is inside, how many secrets were removed and what could not be included.
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGzip } from 'node:zlib';
import { create as createTar } from 'tar';
import { isRowLine, rowTime } from './row-parser';
import { isOverviewLine, iso, parseHeader, parseRecord, streamLines } from './reader';
import { OVERVIEW_KIND_PREFIX } from './overview-stream';
import { LineRedactor, redactJson, redactSecretsCounted } from './redact';
import { BLOCK_CHECKSUMS, BlockSealer } from './block-sum';
import type { JournalLine } from './types';
import { oneLine } from '@shared/display-text';

export interface IncidentBundleInput {
  /** The session recording; the bundle holds a copy with secrets removed. */
  recordingPath: string;
  /** Display name and notes of the session (e.g. from SessionStore.info / annotations). */
  session?: { id: string; name: string; annotations?: { ts: number; text: string }[] };
  /** Unit files as `systemctl cat` shows them. */
  unitFiles: { unit: string; text: string }[];
  /** The journal of the monitored units around the incident. */
  journal: JournalLine[];
  /** Raw /metrics texts taken at the time of the incident. */
  snapshots: { name: string; takenAt?: number; text: string }[];
  /** The incident window; journal lines outside it are left out. */
  window?: { fromMs: number; toMs: number };
  /** Free text from the operator. */
  note?: string;
}

export interface IncidentBundleResult {
  path: string;
  /** Paths inside the archive. */
  files: string[];
  /** Secrets removed, all files together. */
  redactions: number;
  warnings: string[];
}

const BUNDLE_FORMAT = 'pd-console-incident-bundle';
/** Decompressed bytes allowed to queue in the copy's gzip stream before reading pauses. */
const COPY_QUEUE_LIMIT = 8 * 1024 * 1024;

const safeName = (s: string): string =>
  s
    .replace(/[^A-Za-z0-9@._-]/g, '_')
    .replace(/^\.+/, '_')
    .slice(0, 120) || '_';

/** Writes the bundle to `outPath` (a .tar.gz that must not exist yet). */
export async function writeIncidentBundle(
  input: IncidentBundleInput,
  outPath: string,
): Promise<IncidentBundleResult> {
  if (
    await stat(outPath).then(
      () => true,
      () => false,
    )
  )
    throw new Error(`Cannot write the incident bundle: ${outPath} already exists.`);
  const staging = await mkdtemp(join(tmpdir(), 'pdc-incident-'));
  const top = `pd-console-incident-${new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')}`;
  const root = join(staging, top);
  const files: { path: string; what: string }[] = [];
  const warnings: string[] = [];
  const counter = { count: 0 };
  try {
    await mkdir(root, { recursive: true, mode: 0o700 });

    const copy = await redactedRecordingCopy(input.recordingPath, join(root, 'recording.pdrec.jsonl.gz'));
    counter.count += copy.redactions;
    warnings.push(...copy.warnings);
    files.push({ path: 'recording.pdrec.jsonl.gz', what: 'the session recording, secrets removed' });

    if (input.unitFiles.length) await mkdir(join(root, 'units'));
    const usedNames = new Set<string>();
    for (const u of input.unitFiles) {
      let name = safeName(u.unit);
      while (usedNames.has(name)) name = `_${name}`;
      usedNames.add(name);
      const r = redactSecretsCounted(u.text);
      counter.count += r.count;
      await writeFile(join(root, 'units', name), r.text, { mode: 0o600 });
      files.push({ path: `units/${name}`, what: `unit file of ${u.unit}` });
    }

    const from = input.window?.fromMs ?? -Infinity;
    const to = input.window?.toMs ?? Infinity;
    const lines = input.journal.filter((l) => l.ts >= from && l.ts <= to).sort((a, b) => a.ts - b.ts);
    const lr = new LineRedactor();
    // One line per entry, what the host wrote in it shown rather than acting on whoever `cat`s the file (an escape
    // sequence, a carriage return, a newline that would forge another entry); made visible after the secrets are
    // removed, so a key printed over several lines is still recognised.
    const journalText = lines
      .map(
        (l) =>
          `${iso(l.ts)} ${oneLine(l.unit)}[${l.priority}] ${oneLine(lr.line(`${l.role}\u0000${l.unit}`, l.message))}`,
      )
      .join('\n');
    counter.count += lr.count;
    const jr = redactSecretsCounted(journalText);
    counter.count += jr.count;
    await writeFile(join(root, 'journal.log'), jr.text + (lines.length ? '\n' : ''), { mode: 0o600 });
    files.push({
      path: 'journal.log',
      what: `${lines.length} journal lines${input.window ? ' in the incident window' : ''}`,
    });
    if (input.journal.length > lines.length)
      warnings.push(`${input.journal.length - lines.length} journal lines outside the window were left out.`);

    if (input.snapshots.length) await mkdir(join(root, 'snapshots'));
    for (const [i, snap] of input.snapshots.entries()) {
      const name = `${String(i + 1).padStart(2, '0')}-${safeName(snap.name)}.prom`;
      const r = redactSecretsCounted(snap.text);
      counter.count += r.count;
      await writeFile(join(root, 'snapshots', name), r.text, { mode: 0o600 });
      files.push({
        path: `snapshots/${name}`,
        what: `metrics snapshot ${snap.name}${snap.takenAt ? ` at ${iso(snap.takenAt)}` : ''}`,
      });
    }

    // Operator-supplied text is redacted before the count is written, so the manifest's figure is final.
    const described = redactJson(
      {
        session: input.session
          ? {
              ...input.session,
              annotations: (input.session.annotations ?? []).map((a) => ({ time: iso(a.ts), text: a.text })),
            }
          : null,
        note: input.note ?? null,
        warnings,
      },
      counter,
    );
    const manifest = {
      format: BUNDLE_FORMAT,
      version: 1,
      createdAt: new Date().toISOString(),
      session: described.session,
      recording: copy.header,
      window: input.window ? { from: iso(input.window.fromMs), to: iso(input.window.toMs) } : null,
      note: described.note,
      files,
      redactions: counter.count,
      redactionNote:
        'Tokens, passwords, API keys, Authorization headers, URL credentials and private key blocks were replaced by [REDACTED].',
      warnings: described.warnings,
    };
    await writeFile(join(root, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n', { mode: 0o600 });

    await createTar({ gzip: true, file: outPath, cwd: staging, portable: true, mode: 0o600 }, [top]);
    return {
      path: outPath,
      files: ['manifest.json', ...files.map((f) => f.path)].map((f) => `${top}/${f}`),
      redactions: counter.count,
      warnings,
    };
  } catch (err) {
    await rm(outPath, { force: true });
    throw new Error(`Cannot write the incident bundle ${outPath}: ${(err as Error).message}`, { cause: err });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * Copies a recording line by line with every string outside scrape rows redacted (scrape rows hold only numbers
 * and the target name). A damaged source is copied up to the damage; the warning says so.
 */
async function redactedRecordingCopy(
  src: string,
  dst: string,
): Promise<{ redactions: number; warnings: string[]; header: unknown }> {
  const gzip = createGzip({ level: 6 });
  const file = createWriteStream(dst, { flags: 'wx', mode: 0o600 });
  gzip.pipe(file);
  let failed: Error | null = null;
  gzip.on('error', (e) => (failed ??= e));
  file.on('error', (e) => (failed ??= e));
  const counter = { count: 0 };
  const lr = new LineRedactor();
  let header: unknown = null;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let lastTs = -Infinity;
  let startedAt = 0;
  // The copy's records differ from the source's (redacted), so it gets block checksums of its own.
  const sealer = new BlockSealer();
  const push = (b: Buffer): void => {
    pending.push(b);
    pendingBytes += b.length;
    sealer.add(b);
    if (pendingBytes > 1 << 20) drain();
  };
  const drain = (): void => {
    const seal = sealer.seal(Number.isFinite(lastTs) ? lastTs : startedAt);
    if (seal) pending.push(Buffer.from(seal));
    if (!pending.length) return;
    gzip.write(Buffer.concat(pending));
    pending = [];
    pendingBytes = 0;
  };
  const NL = Buffer.from('\n');
  const end = await streamLines(
    src,
    (line) => {
      const h = redactJson(parseHeader(src, line), counter);
      startedAt = h.startedAt;
      header = {
        sessionId: h.sessionId,
        name: h.name,
        startedAt: iso(h.startedAt),
        host: h.host,
        deployment: h.deployment.name,
      };
      // The copy is one gzip member without the overview members and index (their offsets are the source's):
      // its header says it has no overview, so a reader reads its data.
      const { overview: _overview, ...rest } = h;
      push(
        Buffer.from(JSON.stringify({ ...rest, blockChecksums: BLOCK_CHECKSUMS, redactedCopy: true }) + '\n'),
      );
    },
    (buf, a, b) => {
      if (isRowLine(buf, a, b)) {
        const t = rowTime(buf, a, b);
        if (t > lastTs) lastTs = t;
        push(Buffer.from(buf.subarray(a, b)));
        push(NL);
        return;
      }
      if (isOverviewLine(buf, a, b)) return;
      const r = parseRecord(buf.toString('utf8', a, b));
      if (r.k === 'index' || r.k.startsWith(OVERVIEW_KIND_PREFIX)) return;
      if (typeof r.t === 'number' && r.t > lastTs) lastTs = r.t;
      let out: unknown;
      if (r.k === 'journal' && typeof r.m === 'string')
        out = { ...r, m: lr.line(`${String(r.r)}\u0000${String(r.u)}`, r.m) };
      else out = redactJson(r, counter);
      push(Buffer.from(JSON.stringify(out) + '\n'));
    },
    () => {
      drain();
      return gzip.writableLength > COPY_QUEUE_LIMIT ? once(gzip, 'drain').then(() => undefined) : undefined;
    },
  );
  drain();
  gzip.end();
  // A stream error is recorded in `failed` by the listeners above and reported just below.
  if (!file.closed) await once(file, 'close').catch(() => undefined);
  if (failed) throw new Error(`copying the recording failed: ${(failed as Error).message}`);
  const warnings: string[] = [];
  if (end.damage)
    warnings.push(
      `The recording is damaged (${end.damage}); the bundle holds what was readable, up to ${iso(lastTs)} or later.`,
    );
  return { redactions: counter.count + lr.count, warnings, header };
}
