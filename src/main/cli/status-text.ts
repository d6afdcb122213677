// `pd-console status` in words, from the same report --json prints (status-report.ts). The origin host and its
// link, the deployment, then one row per service: its state, its condition as systemd means it and its KV, with
// what to do next, why a figure is missing and its headline figures beneath. A deployment whose workers form
// groups (hasWorkerGroups: several of a role, several hosts, a worker spanning nodes — the rule the app's screens
// follow) also says which worker each row is and where it runs, under a header, with the per-role totals; one
// router, one prefill and one decode on one host read as their three roles (one box does not pay for fleets).
import { oneLine } from '@shared/display-text';
import type { ConditionKind } from '@shared/unit-condition';
import { linkText } from './link-status';
import type { ServiceEntry, StatusReport } from './status-report';
import { verdictText } from './verdict-text';

/** A service's condition while its host has no link: the one reason every probe of it fails. */
export const NO_LINK_TEXT = 'unknown — no link to the host';

/** Conditions in which a service's endpoint is expected to answer: only then is a failed scrape news. */
const SCRAPED_CONDITIONS = new Set<ConditionKind>(['serving', 'not-answering', 'unknown']);

/** The least width of the role, unit and state columns, so that the columns of a short deployment stay put. */
const MIN_WIDTH = { role: 7, unit: 27, state: 19 };
const GAP = '  ';
/** Detail lines start where a one-of-each deployment's unit column does. */
const DETAIL = ' '.repeat(MIN_WIDTH.role + GAP.length);

export interface StatusView {
  now: number;
  /** hasWorkerGroups of the deployment's services. */
  grouped: boolean;
}

export function statusText(r: StatusReport, { now, grouped }: StatusView): string {
  const count = (role: string): number => r.services.filter((s) => s.role === role).length;
  const lines = [`${oneLine(r.hostLabel)} — ${linkText(r.link, now)}`, oneLine(r.deployment)];
  if (grouped)
    lines.push(
      `${r.hosts.length} host(s) (${r.hosts.map((h) => h.id + (h.unreachable ? ' unreachable' : '')).join(', ')}): ` +
        `${count('router')} router, ${count('prefill')} prefill, ${count('decode')} decode` +
        (count('regular') > 0 ? `, ${count('regular')} regular` : ''),
    );

  const rows = r.services.map((s) => [
    s.role,
    ...(grouped ? [s.name, s.url, s.host] : []),
    unitText(s),
    stateText(s),
    oneLine(s.condition?.text ?? s.health ?? '—') + (s.kv ? `  KV ${kvText(s.kv)}` : ''),
  ]);
  const head = grouped ? ['ROLE', 'WORKER', 'URL', 'HOST', 'UNIT', 'STATE', 'CONDITION'] : null;
  const least = grouped
    ? [MIN_WIDTH.role, 0, 0, 0, MIN_WIDTH.unit, MIN_WIDTH.state]
    : [MIN_WIDTH.role, MIN_WIDTH.unit, MIN_WIDTH.state];
  const widths = least.map((w, i) => Math.max(w, head?.[i].length ?? 0, ...rows.map((row) => row[i].length)));
  const fmt = (row: string[]): string =>
    row
      .map((c, i) => (i < widths.length ? c.padEnd(widths[i]) : c))
      .join(GAP)
      .trimEnd();
  if (head) lines.push(fmt(head));
  // The ranks of a DP-aware server share its service's figures: they are said once, under its first rank.
  const said = new Set<object>();
  r.services.forEach((s, i) => {
    lines.push(fmt(rows[i]));
    if (s.scrapes && !said.has(s.scrapes)) {
      said.add(s.scrapes);
      lines.push(...detailLines(s).map((l) => DETAIL + oneLine(l)));
    }
  });

  if (grouped)
    for (const [role, t] of Object.entries(r.roles))
      lines.push(
        `${role}: ${t.healthy}/${t.workers} healthy, KV ${pct(t.kv.ratio)} (${tokens(t.kv.usedTokens)} / ${tokens(t.kv.capacityTokens)} tokens)` +
          (t.fullest && t.workers > 1 ? `, fullest ${t.fullest.name} at ${pct(t.fullest.ratio)}` : ''),
      );
  for (const s of r.services) for (const n of s.notes ?? []) lines.push(`note: ${s.name}: ${oneLine(n)}`);
  if (r.unplaced.length > 0) {
    lines.push('unplaced:');
    for (const u of r.unplaced) lines.push(`  ${oneLine(`${u.reason} — ${u.fix}`)}`);
  }
  if (r.unrouted.length > 0) {
    lines.push('SGLang units no router lists:');
    for (const u of r.unrouted)
      lines.push(`  ${oneLine(`${u.host} ${u.unit} (${u.role}, ${u.apiUrl}): ${u.reason}`)}`);
  }
  return lines.join('\n') + '\n' + verdictText(r.verdict);
}

/**
 * What to do next, then why its figures are missing or the figures: with its host's link down every probe fails
 * for that one reason, which the first line (or the host list) gives; a unit that is not running (or still
 * loading) has no endpoint to scrape, which its condition already says.
 */
function detailLines(s: ServiceEntry): string[] {
  const c = s.condition;
  if (!c || c.text === NO_LINK_TEXT) return [];
  const out = c.nextStep ? [`next: ${c.nextStep}`] : [];
  if (!SCRAPED_CONDITIONS.has(c.kind)) return out;
  if (s.scrapes?.error) return [...out, `metrics: ${s.scrapes.error}`];
  if (s.role !== 'router' && !s.kv && s.kvMissing) out.push(`KV: ${s.kvMissing}`);
  out.push(headlineText(s.signals ?? {}));
  for (const [k, why] of Object.entries(s.signalsWhy ?? {})) out.push(`${k}: n/a — ${why}`);
  return out;
}

function unitText(s: ServiceEntry): string {
  const others = (s.units ?? []).slice(1).map((u) => `${u.host} r${u.nodeRank}`);
  return oneLine(s.unit ?? '—') + (others.length > 0 ? ` +${others.join(',')}` : '');
}

function stateText(s: ServiceEntry): string {
  if (s.activeState) return `${s.activeState}/${s.subState ?? '?'}`;
  return oneLine(`unknown (${s.condition?.text === NO_LINK_TEXT ? 'no link' : (s.error ?? 'not read')})`);
}

function kvText(kv: NonNullable<ServiceEntry['kv']>): string {
  return `${pct(kv.ratio)} (${tokens(kv.usedTokens)} / ${tokens(kv.capacityTokens)} tokens, from ${kv.source})`;
}

function headlineText(signals: Record<string, number | null>): string {
  const f = (k: string, digits: number, unit = ''): string | null => {
    const v = signals[k];
    return v === undefined ? null : `${k} ${v === null ? 'n/a' : `${v.toFixed(digits)}${unit}`}`;
  };
  return [
    f('requestsPerSecond', 2),
    f('errorShare', 4),
    f('latencyP50Seconds', 3, ' s'),
    f('latencyP99Seconds', 3, ' s'),
    f('running', 0),
    f('queued', 0),
    f('generationTokensPerSecond', 1),
  ]
    .filter((x): x is string => x !== null)
    .join('  ');
}

const pct = (r: number | null): string => (r === null ? 'n/a' : `${(r * 100).toFixed(1)} %`);
const tokens = (n: number): string => n.toLocaleString('en-US');
