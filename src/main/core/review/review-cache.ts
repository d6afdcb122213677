// The review cache: what opening a recording computes (the signal table, KV sources, events, states), stored
// next to nothing else in a cache folder so the next open of the same file skips decompressing and decoding it
// (24 h: seconds → tens of milliseconds). An entry is valid only for the exact file it was made from (path,
// size, mtime); the folder is bounded and evicts the least recently used entries. Losing it costs time only.
//
// Entry <key>.rvc: "PDRVC001", u32 LE length of a JSON meta block, the meta, then typed-array blobs each
// starting on an 8-byte boundary (time columns float64, signal columns float32, KV sources int8; a column with
// one value throughout is stored in the meta instead). <key>.journal.json.gz holds the journal, loaded lazily.
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';
import type { SignalMissing } from '@shared/contract';
import type { AppEvent, Role } from '@shared/domain';
import type {
  JournalLine,
  RecordingStats,
  StoredHeader,
  TimedHealth,
  TimedUnitState,
} from '../recording/types';
import type { KvMeta } from '../signals/evaluate';
import { SignalTable, type GroupColumns } from './signal-table';
import type { ReviewData, RoleInfo, RouterWorkerTimeline } from './review-data';

const MAGIC = 'PDRVC001';
// Bumped whenever what review computes changes (4: one evaluator, dp-rank tokens, recorded /server_info capacity;
// 5: the router's own list of its workers; 6: a file that names its services by role is read as a fleet of one).
const CACHE_VERSION = 6;
const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

export interface SourceStamp {
  path: string;
  size: number;
  mtimeMs: number;
}

/** The typed arrays an entry stores as blobs, by the name its meta gives their type. */
const BLOB_TYPES = {
  f64: Float64Array,
  f32: Float32Array,
  i32: Int32Array,
  u8: Uint8Array,
  i8: Int8Array,
} as const;
type BlobType = keyof typeof BLOB_TYPES;
type Blob = { type: BlobType; bytes: number };
type Typed = Float64Array | Float32Array | Int32Array | Uint8Array | Int8Array;

function blobType(a: Typed): BlobType {
  for (const [name, Type] of Object.entries(BLOB_TYPES)) if (a instanceof Type) return name as BlobType;
  throw new Error(`no blob type for ${Object.prototype.toString.call(a)}`);
}

/** The router's worker timeline with every typed array as a blob index. */
interface CachedRouterWorkers {
  t: number;
  from: number;
  rows: number;
  urls: string[];
  seen: number[];
  health: number[];
  removed: number[];
  cb: number[];
  active: number[];
  roles: {
    role: string;
    name: string;
    labels: Record<string, string>;
    row0: number;
    rows: number | null;
    v: number;
  }[][];
}

interface CacheMeta {
  version: number;
  source: SourceStamp;
  header: StoredHeader;
  firstTs: number;
  lastTs: number;
  lastScrapeTs: number;
  closedCleanly: boolean;
  warnings: string[];
  stats: RecordingStats;
  roles: Role[];
  notExposed: Record<string, SignalMissing>;
  roleInfo: [string, RoleInfo][];
  events: AppEvent[];
  unitStates: TimedUnitState[];
  health: TimedHealth[];
  groups: { name: string; t: number; cols: { key: string; blob?: number; value?: number | null }[] }[];
  kv: { role: string; source: number; metas: KvMeta[] }[];
  routerWorkers?: CachedRouterWorkers;
  blobs: Blob[];
  journalLines: number;
}

export class ReviewCache {
  constructor(
    readonly dir: string,
    private readonly maxBytes = 1024 ** 3,
  ) {}

  private base(s: SourceStamp): string {
    const h = createHash('sha1').update(s.path).digest('hex').slice(0, 16);
    return join(this.dir, `${h}-${s.size}-${Math.round(s.mtimeMs)}`);
  }

  /** An entry for exactly this file exists (made from a file of this size and mtime; its content is not read). */
  async has(s: SourceStamp): Promise<boolean> {
    return stat(`${this.base(s)}.rvc`).then(
      () => true,
      () => false,
    );
  }

  /** The cached data of exactly this file, or null (no entry, stale, unreadable: the caller recomputes). */
  async load(s: SourceStamp): Promise<{ data: ReviewData; journal: () => Promise<JournalLine[]> } | null> {
    const base = this.base(s);
    let buf: Buffer;
    try {
      buf = await readFile(`${base}.rvc`);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    if (buf.length < 12 || buf.toString('latin1', 0, 8) !== MAGIC) return null;
    const metaLen = buf.readUInt32LE(8);
    const meta = JSON.parse(buf.toString('utf8', 12, 12 + metaLen)) as CacheMeta;
    if (
      meta.version !== CACHE_VERSION ||
      meta.source.path !== s.path ||
      meta.source.size !== s.size ||
      Math.round(meta.source.mtimeMs) !== Math.round(s.mtimeMs)
    )
      return null;
    // Typed arrays need aligned offsets: copy the blob region into a fresh (8-aligned) buffer once.
    const start = pad8(12 + metaLen);
    const region = new Uint8Array(buf.length - start);
    region.set(buf.subarray(start));
    const blobs: Typed[] = [];
    let off = 0;
    for (const b of meta.blobs) {
      const ab = region.buffer;
      const Type = BLOB_TYPES[b.type];
      blobs.push(new Type(ab, off, b.bytes / Type.BYTES_PER_ELEMENT));
      off = pad8(off + b.bytes);
    }
    const groups = new Map<string, GroupColumns>();
    for (const g of meta.groups) {
      const t = blobs[g.t] as Float64Array;
      const cols = new Map<string, Float32Array>();
      for (const c of g.cols)
        cols.set(
          c.key,
          c.blob !== undefined
            ? (blobs[c.blob] as Float32Array)
            : new Float32Array(t.length).fill(c.value ?? NaN),
        );
      groups.set(g.name, { t, cols });
    }
    const data: ReviewData = {
      header: meta.header,
      firstTs: meta.firstTs,
      lastTs: meta.lastTs,
      lastScrapeTs: meta.lastScrapeTs,
      closedCleanly: meta.closedCleanly,
      warnings: meta.warnings,
      stats: meta.stats,
      roles: meta.roles,
      table: new SignalTable(groups),
      kv: new Map(meta.kv.map((k) => [k.role, { source: blobs[k.source] as Int8Array, metas: k.metas }])),
      notExposed: meta.notExposed,
      roleInfo: new Map(meta.roleInfo),
      ...(meta.routerWorkers ? { routerWorkers: routerWorkersFrom(meta.routerWorkers, blobs) } : {}),
      events: meta.events,
      unitStates: meta.unitStates,
      health: meta.health,
    };
    // Recently used entries survive eviction.
    const now = new Date();
    await utimes(`${base}.rvc`, now, now).catch(() => undefined);
    return {
      data,
      journal: async () =>
        meta.journalLines ? decodeJournal(await readFile(`${base}.journal.json.gz`)) : [],
    };
  }

  /** Stores an entry (atomically), then evicts the oldest entries beyond the size bound. */
  async store(s: SourceStamp, data: ReviewData, journal: readonly JournalLine[]): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const base = this.base(s);
    const blobs: Blob[] = [];
    const parts: Uint8Array[] = [];
    const add = (a: Typed): number => {
      blobs.push({ type: blobType(a), bytes: a.byteLength });
      parts.push(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
      return blobs.length - 1;
    };
    const groups: CacheMeta['groups'] = [];
    for (const [name, g] of data.table.groups) {
      const cols: CacheMeta['groups'][number]['cols'] = [];
      const t = add(g.t);
      for (const [key, col] of g.cols) {
        const c = constant(col);
        cols.push(c.constant ? { key, value: c.value } : { key, blob: add(col) });
      }
      groups.push({ name, t, cols });
    }
    const kv = [...data.kv].map(([role, k]) => ({ role, source: add(k.source), metas: k.metas }));
    const meta: CacheMeta = {
      version: CACHE_VERSION,
      source: s,
      header: data.header,
      firstTs: data.firstTs,
      lastTs: data.lastTs,
      lastScrapeTs: data.lastScrapeTs,
      closedCleanly: data.closedCleanly,
      warnings: data.warnings,
      stats: data.stats,
      roles: data.roles,
      notExposed: data.notExposed,
      roleInfo: [...data.roleInfo],
      events: data.events,
      unitStates: data.unitStates,
      health: data.health,
      groups,
      kv,
      ...(data.routerWorkers ? { routerWorkers: cachedRouterWorkers(data.routerWorkers, add) } : {}),
      blobs,
      journalLines: journal.length,
    };
    const metaBuf = Buffer.from(JSON.stringify(meta), 'utf8');
    const head = Buffer.alloc(pad8(12 + metaBuf.length));
    head.write(MAGIC, 0, 'latin1');
    head.writeUInt32LE(metaBuf.length, 8);
    metaBuf.copy(head, 12);
    const chunks: Uint8Array[] = [head];
    for (const p of parts) {
      chunks.push(p);
      const gap = pad8(p.byteLength) - p.byteLength;
      if (gap) chunks.push(new Uint8Array(gap));
    }
    const tmp = `${base}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
    if (journal.length) {
      await writeFile(`${tmp}.j`, await gzipAsync(encodeJournal(journal), { level: 1 }), { mode: 0o600 });
      await rename(`${tmp}.j`, `${base}.journal.json.gz`);
    }
    await writeFile(tmp, chunks, { mode: 0o600 });
    await rename(tmp, `${base}.rvc`);
    await this.evict(base);
  }

  /** Removes every entry made from this path (the file was deleted). */
  async forget(path: string): Promise<void> {
    const h = createHash('sha1').update(path).digest('hex').slice(0, 16);
    for (const name of await readdir(this.dir).catch(() => [] as string[]))
      if (name.startsWith(`${h}-`)) await rm(join(this.dir, name), { force: true });
  }

  private async evict(keep: string): Promise<void> {
    const names = await readdir(this.dir);
    const entries = new Map<string, { bytes: number; used: number }>();
    for (const name of names) {
      const m = /^(.+)\.(rvc|journal\.json\.gz)$/.exec(name);
      if (!m) continue;
      const st = await stat(join(this.dir, name)).catch(() => null);
      if (!st) continue;
      const e = entries.get(m[1]) ?? { bytes: 0, used: 0 };
      e.bytes += st.size;
      if (m[2] === 'rvc') e.used = st.mtimeMs;
      entries.set(m[1], e);
    }
    let total = [...entries.values()].reduce((a, e) => a + e.bytes, 0);
    const keepName = keep.slice(this.dir.length + 1);
    const samePath = keepName.slice(0, 16);
    for (const [name, e] of [...entries].sort((a, b) => a[1].used - b[1].used)) {
      if (name === keepName) continue;
      // An older entry of the same file (it grew or changed) is useless: drop it whatever the total.
      if (total <= this.maxBytes && !name.startsWith(samePath)) continue;
      await rm(join(this.dir, `${name}.rvc`), { force: true });
      await rm(join(this.dir, `${name}.journal.json.gz`), { force: true });
      total -= e.bytes;
    }
  }
}

function pad8(n: number): number {
  return (n + 7) & ~7;
}

function constant(col: Float32Array): { constant: boolean; value: number | null } {
  const first = col.length ? col[0] : NaN;
  const nan = Number.isNaN(first);
  for (let i = 1; i < col.length; i++) {
    const v = col[i];
    if (nan ? !Number.isNaN(v) : v !== first) return { constant: false, value: null };
  }
  return { constant: true, value: nan ? null : first };
}

/** Columns with small string tables: ~3× smaller than an array of objects, and faster to parse. */
function encodeJournal(lines: readonly JournalLine[]): string {
  const roles: string[] = [];
  const units: string[] = [];
  const idx = (list: string[], s: string): number => {
    let i = list.indexOf(s);
    if (i < 0) i = list.push(s) - 1;
    return i;
  };
  const ts: number[] = [];
  const meta: number[] = [];
  const msg: string[] = [];
  for (const l of lines) {
    ts.push(l.ts);
    meta.push(idx(roles, l.role), idx(units, l.unit), l.priority);
    msg.push(l.message);
  }
  return JSON.stringify({ roles, units, ts, meta, msg });
}

async function decodeJournal(gz: Buffer): Promise<JournalLine[]> {
  const j = JSON.parse((await gunzipAsync(gz)).toString('utf8')) as {
    roles: string[];
    units: string[];
    ts: number[];
    meta: number[];
    msg: string[];
  };
  return j.ts.map((ts, i) => ({
    ts,
    role: j.roles[j.meta[3 * i]],
    unit: j.units[j.meta[3 * i + 1]],
    priority: j.meta[3 * i + 2],
    message: j.msg[i],
  }));
}

function cachedRouterWorkers(tl: RouterWorkerTimeline, add: (a: Typed) => number): CachedRouterWorkers {
  const w = tl.rows;
  return {
    t: add(tl.t),
    from: tl.from,
    rows: w.rows,
    urls: w.urls,
    seen: w.seen.map(add),
    health: w.health.map(add),
    removed: w.removed.map(add),
    cb: w.cb.map(add),
    active: w.active.map(add),
    roles: w.roles.map((list) =>
      list.map(({ role, series: x }) => ({
        role,
        name: x.name,
        labels: x.labels,
        row0: x.row0,
        rows: x.rows ? add(x.rows) : null,
        v: add(x.v),
      })),
    ),
  };
}

function routerWorkersFrom(c: CachedRouterWorkers, blobs: readonly Typed[]): RouterWorkerTimeline {
  const of = <T extends Typed>(i: number): T => blobs[i] as T;
  return {
    t: of<Float64Array>(c.t),
    from: c.from,
    rows: {
      rows: c.rows,
      urls: c.urls,
      seen: c.seen.map((i) => of<Uint8Array>(i)),
      health: c.health.map((i) => of<Float64Array>(i)),
      removed: c.removed.map((i) => of<Uint8Array>(i)),
      cb: c.cb.map((i) => of<Float64Array>(i)),
      active: c.active.map((i) => of<Float64Array>(i)),
      roles: c.roles.map((list) =>
        list.map((r) => ({
          role: r.role,
          series: {
            name: r.name,
            labels: r.labels,
            row0: r.row0,
            rows: r.rows === null ? null : of<Int32Array>(r.rows),
            v: of<Float64Array>(r.v),
          },
        })),
      ),
    },
  };
}
