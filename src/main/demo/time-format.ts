// Timestamp and duration formats exactly as the emulated tools print them. The demo host's clock is UTC.

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

const p2 = (n: number): string => String(n).padStart(2, '0');

/** systemd's FORMAT_TIMESTAMP: "Sun 2026-11-29 16:46:30 UTC". */
export function systemdTimestamp(ms: number): string {
  const d = new Date(ms);
  return (
    `${DAYS[d.getUTCDay()]} ${d.getUTCFullYear()}-${p2(d.getUTCMonth() + 1)}-${p2(d.getUTCDate())} ` +
    `${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())} UTC`
  );
}

/** "2026-11-29 16:46:30" — Python logging's default asctime without milliseconds (SGLang's datefmt). */
export function pythonAsctime(ms: number): string {
  const d = new Date(ms);
  return (
    `${d.getUTCFullYear()}-${p2(d.getUTCMonth() + 1)}-${p2(d.getUTCDate())} ` +
    `${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())}`
  );
}

/** RFC 3339 with microseconds and Z, as Rust's tracing-subscriber prints it: 2026-11-29T16:46:30.123456Z */
export function rustTracingTimestamp(us: number): string {
  const ms = Math.floor(us / 1000);
  const d = new Date(ms);
  const frac = String(Math.floor(us % 1_000_000)).padStart(6, '0');
  return (
    `${d.getUTCFullYear()}-${p2(d.getUTCMonth() + 1)}-${p2(d.getUTCDate())}T` +
    `${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())}.${frac}Z`
  );
}

/** journalctl -o short: "Nov 29 16:46:30". */
export function journalShort(us: number): string {
  const d = new Date(Math.floor(us / 1000));
  return `${MONTHS[d.getUTCMonth()]} ${p2(d.getUTCDate())} ${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())}`;
}

/** journalctl -o short-precise: "Nov 29 16:46:30.123456". */
export function journalShortPrecise(us: number): string {
  return `${journalShort(us)}.${String(Math.floor(us % 1_000_000)).padStart(6, '0')}`;
}

/** journalctl -o short-iso (systemd ≥ 250 prints the offset with a colon): "2026-11-29T16:46:30+00:00". */
export function journalShortIso(us: number): string {
  const d = new Date(Math.floor(us / 1000));
  return (
    `${d.getUTCFullYear()}-${p2(d.getUTCMonth() + 1)}-${p2(d.getUTCDate())}T` +
    `${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())}+00:00`
  );
}

/** journalctl -o short-iso-precise: "2026-11-29T16:46:30.123456+00:00". */
export function journalShortIsoPrecise(us: number): string {
  const base = journalShortIso(us);
  return `${base.slice(0, 19)}.${String(Math.floor(us % 1_000_000)).padStart(6, '0')}${base.slice(19)}`;
}

const TIMESPAN_UNITS: ReadonlyArray<[string, number]> = [
  ['y', 31_557_600_000_000],
  ['month', 2_629_800_000_000],
  ['w', 604_800_000_000],
  ['d', 86_400_000_000],
  ['h', 3_600_000_000],
  ['min', 60_000_000],
  ['s', 1_000_000],
  ['ms', 1000],
  ['us', 1],
];

/**
 * systemd's format_timespan(): "10s", "30min", "1min 30s", and with a coarser accuracy a dot notation for the
 * last unit under a minute ("1min 2.345s", the fraction truncated to the accuracy, never trimmed).
 * `systemctl show` uses accuracy 1 µs; the "Consumed … CPU time" line 1 ms.
 */
export function systemdTimespan(us: number, accuracyUs = 1): string {
  let t = Math.floor(us);
  if (t <= 0) return '0';
  let out = '';
  let something = false;
  for (const [suffix, size] of TIMESPAN_UNITS) {
    if (t <= 0) break;
    if (t < accuracyUs && something) break;
    if (t < size) continue;
    const a = Math.floor(t / size);
    let b = t % size;
    let done = false;
    if (t < 60_000_000 && b > 0) {
      let j = 0;
      for (let cc = size; cc > 1; cc = Math.floor(cc / 10)) j++;
      for (let cc = accuracyUs; cc > 1; cc = Math.floor(cc / 10)) {
        b = Math.floor(b / 10);
        j--;
      }
      if (j > 0) {
        out += `${out ? ' ' : ''}${a}.${String(b).padStart(j, '0')}${suffix}`;
        t = 0;
        done = true;
      }
    }
    if (!done) {
      out += `${out ? ' ' : ''}${a}${suffix}`;
      t = b;
    }
    something = true;
  }
  return out;
}

/** CPU time as the "Consumed … CPU time." line prints it: format_timespan at millisecond accuracy. */
export function cpuTimespan(seconds: number): string {
  return systemdTimespan(Math.round(seconds * 1e6), 1000);
}

/**
 * Parses the time specifications journalctl accepts for --since/--until: "YYYY-MM-DD [HH:MM[:SS]]",
 * "HH:MM[:SS]" (today), "today", "yesterday", "now", "@EPOCH", "-5min", "5 min ago", "+1h".
 * Returns epoch ms, or null when journalctl would reject it.
 */
export function parseJournalTime(spec: string, nowMs: number): number | null {
  const s = spec.trim();
  if (s === 'now') return nowMs;
  const dayStart = (ms: number): number => {
    const d = new Date(ms);
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  };
  if (s === 'today') return dayStart(nowMs);
  if (s === 'yesterday') return dayStart(nowMs) - 86_400_000;
  if (s === 'tomorrow') return dayStart(nowMs) + 86_400_000;
  let m = /^@(\d+(?:\.\d+)?)$/.exec(s);
  if (m) return Math.round(Number(m[1]) * 1000);
  m = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?(?:\s*(?:UTC|Z))?$/.exec(s);
  if (m) {
    const frac = m[7] ? Number(`0.${m[7]}`) * 1000 : 0;
    return Date.UTC(+m[1], +m[2] - 1, +m[3], +(m[4] ?? 0), +(m[5] ?? 0), +(m[6] ?? 0)) + frac;
  }
  m = /^(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(s);
  if (m) return dayStart(nowMs) + ((+m[1] * 60 + +m[2]) * 60 + +(m[3] ?? 0)) * 1000;
  const rel = /^([+-])?\s*((?:\d+(?:\.\d+)?\s*[a-z]+\s*)+?)(\s+ago)?$/i.exec(s);
  if (rel && (rel[1] || rel[3])) {
    const span = parseTimespanMs(rel[2]);
    if (span === null) return null;
    return rel[1] === '+' ? nowMs + span : nowMs - span;
  }
  return null;
}

/** "5min", "1h 30min", "90s", "2 days" → ms */
export function parseTimespanMs(text: string): number | null {
  const unitMs: Record<string, number> = {
    us: 0.001,
    usec: 0.001,
    ms: 1,
    msec: 1,
    s: 1000,
    sec: 1000,
    second: 1000,
    seconds: 1000,
    m: 60_000,
    min: 60_000,
    minute: 60_000,
    minutes: 60_000,
    h: 3_600_000,
    hr: 3_600_000,
    hour: 3_600_000,
    hours: 3_600_000,
    d: 86_400_000,
    day: 86_400_000,
    days: 86_400_000,
    w: 604_800_000,
    week: 604_800_000,
    weeks: 604_800_000,
  };
  const re = /(\d+(?:\.\d+)?)\s*([a-z]+)/gi;
  let total = 0;
  let matched = 0;
  let consumed = '';
  for (const m of text.matchAll(re)) {
    const u = unitMs[m[2].toLowerCase()];
    if (u === undefined) return null;
    total += Number(m[1]) * u;
    matched++;
    consumed += m[0];
  }
  if (matched === 0 || consumed.replace(/\s/g, '') !== text.replace(/\s/g, '')) return null;
  return total;
}
