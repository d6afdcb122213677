// What the connection banner says: the link as it is, the last time the host answered with its age counting up,
// and what that makes of the figures below — from then, the units' state now unknown. A fleet host other than
// the origin that cannot be read gets a line of its own naming the workers it leaves unknown.
import type { ConnectionStatus, DeploymentSummary, Observation } from '@shared/domain';
import { serviceId } from '@shared/domain';
import { ago, clockAndAge, dataTime, QUIET_AFTER_MS, type ReadingClock } from './staleness';
import { formatClock } from '../format';

export interface BannerLine {
  /** The host it is about (a fleet's non-origin host), or undefined for the deployment's own link. */
  host?: string;
  state: ConnectionStatus['state'] | 'no-data';
  tone: 'warn' | 'bad';
  text: string;
}

/** The link to `subject` ("the host", "gpu-b") as a sentence, or null while it works (or was never opened). */
export function linkSentence(subject: string, s: ConnectionStatus, now: number): string | null {
  // "The host", but a host's own name as it is spelled.
  const cap = (x: string): string => (x.startsWith('the ') ? `The ${x.slice(4)}` : x);
  switch (s.state) {
    case 'stale':
      return `${cap(subject)} stopped answering at ${clockAndAge(s.since, now)}: ${s.reason}.`;
    case 'reconnecting': {
      const next = Math.max(0, Math.ceil((s.nextAttemptAt - now) / 1000));
      return `The link to ${subject} was lost at ${clockAndAge(s.since, now)} — reconnecting (attempt ${s.attempt}, next in ${next} s): ${s.lastError}`;
    }
    case 'connecting':
      return s.lostSince !== undefined
        ? `The link to ${subject} was lost at ${clockAndAge(s.lostSince, now)} — reconnecting (attempt ${s.attempt}, under way)…`
        : `Connecting to ${subject}${s.attempt > 1 ? ` (attempt ${s.attempt})` : ''}…`;
    case 'failed':
      return `Cannot connect to ${subject}: ${s.reason}${s.hint ? ` — ${s.hint}` : ''}`;
    default:
      return null;
  }
}

/** The link is down (not merely slow): lost and retrying, or given up. */
function lost(s: ConnectionStatus): boolean {
  return (
    s.state === 'reconnecting' ||
    s.state === 'failed' ||
    (s.state === 'connecting' && s.lostSince !== undefined)
  );
}

/**
 * Nothing new is known: readings stopped arriving, or they arrive with nothing in them that answered (the newest
 * answer older than QUIET_AFTER_MS by the readings' own clock).
 */
function quiet(latest: Observation | undefined, clock: ReadingClock): boolean {
  const t = dataTime(latest);
  return t !== null && (clock.stalled || latest!.ts - t > QUIET_AFTER_MS);
}

export function bannerLines(
  view: { summary: DeploymentSummary; connection: ConnectionStatus; latest?: Observation },
  clock: ReadingClock,
): BannerLine[] {
  const { now } = clock;
  const lines: BannerLine[] = [];
  const figuresFrom = dataTime(view.latest);
  const c = view.connection;
  const words = linkSentence('the host', c, now);
  if (words !== null) {
    const figures =
      figuresFrom === null
        ? ''
        : ` The figures below are from ${clockAndAge(figuresFrom, now)}; what the units do now is unknown.`;
    lines.push({
      state: c.state,
      tone: lost(c) ? 'bad' : 'warn',
      text: `${words}${figures}`,
    });
  } else if (c.state === 'connected' && figuresFrom !== null && quiet(view.latest, clock))
    lines.push({
      state: 'no-data',
      tone: 'warn',
      text: `Connected, but nothing has answered since ${clockAndAge(figuresFrom, now)}; the figures below are that old.`,
    });
  // A fleet's other hosts: each one that cannot be read, with the workers it leaves unknown.
  for (const h of view.summary.hosts ?? []) {
    if (h.host.id === view.summary.host.id) continue;
    const w = linkSentence(h.host.id, h.connection, now);
    // A host's first connect at open is not an outage; the host list shows it.
    if (w === null || (h.connection.state === 'connecting' && h.connection.lostSince === undefined)) continue;
    const on = view.summary.deployment.services
      .filter((s) => s.hostId === h.host.id || s.units?.some((u) => u.hostId === h.host.id))
      .map((s) => serviceId(s));
    lines.push({
      host: h.host.id,
      state: h.connection.state,
      tone: lost(h.connection) ? 'bad' : 'warn',
      text: `${w}${on.length ? ` Unknown now: ${on.join(', ')}.` : ''}`,
    });
  }
  return lines;
}

/** "updated 05:54:18" while readings arrive; "no data since 05:54:18 (1 min 10 s)" once they stop. */
export function updatedText(
  latest: Observation | undefined,
  clock: ReadingClock,
): { text: string; quiet: boolean } | null {
  const t = dataTime(latest);
  if (t === null) return null;
  if (!quiet(latest, clock)) return { text: `updated ${formatClock(t)}`, quiet: false };
  return { text: `no data since ${formatClock(t)} (${ago(t, clock.now)})`, quiet: true };
}
