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

/** systemd's format_timespan with the default accuracy used by systemctl show: "10s", "30min", "1min 30s". */
export function systemdTimespan(us: number): string {
  if (us === 0) return '0';
  const units: Array<[string, number]> = [
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
  const parts: string[] = [];
  let rest = us;
  for (const [name, size] of units) {
    if (rest >= size) {
      const n = Math.floor(rest / size);
      rest -= n * size;
      parts.push(`${n}${name}`);
    }
  }
  return parts.join(' ');
}

/** "Consumed 2h 3min 12.345s CPU time." style, as systemd prints CPU usage on unit stop. */
export function cpuTimespan(seconds: number): string {
  // To the millisecond first, so 59.9996 s is "1min 0s" and not "60s".
  const ms = Math.round(seconds * 1000);
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = (ms % 60_000) / 1000;
  const parts: string[] = [];
  if (h) parts.push(`${h}h`);
  if (m) parts.push(`${m}min`);
  parts.push(`${s.toFixed(3).replace(/\.?0+$/, '')}s`);
  return parts.join(' ');
}

/** "tqdm"-style elapsed, e.g. 00:12 */
export function tqdmElapsed(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  return `${p2(Math.floor(s / 60))}:${p2(s % 60)}`;
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
