// What is wrong with the parts of a recording that only make opening fast (format 1.2: the overview members and
// the index written at close, docs/recording-format.md §6), located by byte offset and said in words. Their damage
// costs no data: every reader of the data skips them (layout.ts), and a review computes from the data instead.
import type { DerivedMember, TailIndex } from './layout';
import type { DerivedDamage, StreamEnd } from './types';

const iso = (ms: number): string => new Date(ms).toISOString();

/** How a read of the data ended, as far as the derived parts are concerned. */
export interface DerivedFindings {
  derived: DerivedMember[];
  tailIndex: TailIndex | null;
  fileBytes: number;
  /** The file carries an overview and, once closed, an index (its header says `overview`). */
  hasOverview: boolean;
  /** The end record was read and matched its seal: every data record is there. */
  ended: boolean;
  /** An index record was among the lines of the data (a file re-compressed whole by another tool). */
  indexLine: boolean;
  /** Damage met after the end record (zlib error, failed seal), with the file offset it was met at. */
  afterEnd: { what: string; at: number } | null;
}

export function derivedDamage(f: DerivedFindings): DerivedDamage[] {
  const out: DerivedDamage[] = [];
  for (const m of f.derived) {
    if (m.problem === null) continue;
    out.push(
      m.kind === 'overview'
        ? {
            section: 'overview',
            at: m.at,
            span: m.span,
            what: `overview at byte ${m.at}${m.span ? ` (${iso(m.span[0])} to ${iso(m.span[1])})` : ''} is damaged (${m.problem})`,
          }
        : { section: 'index', at: m.at, span: null, what: `index at byte ${m.at} is damaged (${m.problem})` },
    );
  }
  const t = f.tailIndex;
  if (t?.problem && !out.some((d) => d.at === t.at))
    out.push({
      section: 'index',
      at: t.at,
      span: null,
      what: `index at byte ${t.at} is damaged (${t.problem})`,
    });
  const indexMet = t !== null || f.indexLine || f.derived.some((m) => m.kind === 'index');
  if (f.hasOverview && f.ended && !indexMet)
    out.push({
      section: 'index',
      at: f.fileBytes,
      span: null,
      what: `index is missing: the file ends at byte ${f.fileBytes}, after its end record, where the index written at close should follow (it was cut short after it was closed, e.g. an incomplete copy)`,
    });
  if (f.afterEnd)
    out.push({
      section: 'end',
      at: f.afterEnd.at,
      span: null,
      what: `end is damaged after its end record (${f.afterEnd.what})`,
    });
  return out.sort((a, b) => a.at - b.at);
}

/** One warning for all of it; null when nothing is damaged. `dataComplete`: every data record was read. */
export function derivedWarning(damage: readonly DerivedDamage[], dataComplete: boolean): string | null {
  if (!damage.length) return null;
  const it = damage.length === 1 ? 'It only makes' : 'They only make';
  return (
    `The recording's ${damage.map((d) => d.what).join('; its ')}. ${it} opening fast: ` +
    (dataComplete
      ? 'the data is intact and all of it is shown (re-save the file to rebuild the overview: pd-console recording resave FILE).'
      : 'what is shown is read from the data.')
  );
}

/** How whole a read of the data left the recording: the data's part and the derived parts' part. */
export interface Integrity {
  /** Damage was met only after the end record's block matched its seal. */
  afterEnd: boolean;
  /** Every data record was read (the end record and its seal are there). */
  dataComplete: boolean;
  damage: DerivedDamage[];
  /** derivedWarning of `damage`. */
  warning: string | null;
}

/** `ended`: the end record was read; `indexLine`: an index record was among the lines read. */
export function integrityOf(
  end: StreamEnd,
  read: { ended: boolean; indexLine: boolean; hasOverview: boolean },
): Integrity {
  const { ended } = read;
  // Damage met after the end record's block matched its seal is in what follows the data (the gzip trailer, an
  // overview or index member whose marker was damaged): every data record was read.
  const afterEnd = ended && end.sealed && end.damage !== null;
  const dataComplete = ended && (!end.damage || afterEnd);
  const damage = derivedDamage({
    derived: end.derived,
    tailIndex: end.tailIndex,
    fileBytes: end.fileBytes,
    ...read,
    afterEnd: afterEnd ? { what: end.damage as string, at: end.damageAt ?? end.fileBytes } : null,
  });
  return { afterEnd, dataComplete, damage, warning: derivedWarning(damage, dataComplete) };
}
