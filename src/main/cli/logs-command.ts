// `pd-console logs ROLE|WORKER`: a unit's journal as the console reads it — long lines whole (journalctl --all,
// capped and said), byte arrays decoded, progress bars as their last redraw, secrets removed, every unit of a
// multi-node worker labelled with its host — through the same app and the same journal follow the UI uses.
import { ROLES, type Role } from '@shared/domain';
import type { JournalEntry } from '@shared/contract';
import { oneLine } from '@shared/display-text';
import { parsePromDurationS } from '../core/prometheus/http-client';
import { defineCommand, parseCommandLine, UsageError } from './cli-args';
import type { CliIo } from './cli-io';
import { HOST_OPTION, hostArg, openTarget } from './target';
import { withApp, type CliAppDeps } from './cli-app';

export const LOGS_USAGE = `usage: pd-console logs ROLE|WORKER [--host H] [-n N] [--since T] [--follow] [--json]
  ROLE|WORKER  prefill, decode or router; in a fleet a worker's name (decode-1) — every unit of a
               multi-node worker, each line labelled with its host
  -n N         the last N lines (default 100)
  --since T    the lines of the last T instead (a duration: 90s, 15m, 2h), at most 20,000
  --follow     then every new line as it arrives, until Ctrl-C
  --json       one JSON object per line: ts, priority, unit, host, pid, identifier, message
Lines are the journal as journald gives it: long lines whole (up to 8,192 characters, then "… [cut …]"), lines
journald stored as bytes decoded, a progress bar shown as its last redraw, API keys and tokens removed.`;

export const LOGS_COMMAND = defineCommand({
  name: 'logs',
  usage: LOGS_USAGE,
  options: {
    host: HOST_OPTION,
    lines: { type: 'string', short: 'n', needs: 'a number of lines' },
    since: { type: 'string', needs: 'a duration such as 90s, 15m or 2h' },
    follow: { type: 'boolean', short: 'f' },
    json: { type: 'boolean' },
  },
});

export interface LogsDeps extends CliAppDeps {
  /** Ends --follow (Ctrl-C for people). */
  signal?: AbortSignal;
}

const PRIORITY = ['emerg', 'alert', 'crit', 'err', 'warning', 'notice', 'info', 'debug'];

function usage(io: CliIo, why: string): number {
  io.stderr(`pd-console logs: ${why}\n${LOGS_USAGE}\n`);
  return 2;
}

function lineText(e: JournalEntry): string {
  const when = new Date(e.ts).toISOString().replace('T', ' ').slice(0, 23);
  const where = [e.host, e.unit].filter(Boolean).join(' ');
  const level = e.priority <= 4 ? ` ${PRIORITY[e.priority]}` : '';
  return `${when} ${where}${e.pid ? `[${e.pid}]` : ''}${level}: ${oneLine(e.message)}\n`;
}

function lineJson(e: JournalEntry): string {
  return `${JSON.stringify({
    ts: new Date(e.ts).toISOString(),
    priority: e.priority,
    unit: e.unit ?? null,
    host: e.host ?? null,
    ...(e.nodeRank !== undefined ? { nodeRank: e.nodeRank } : {}),
    pid: e.pid ?? null,
    identifier: e.identifier ?? null,
    message: e.message,
  })}\n`;
}

export async function logsCommand(argv: string[], io: CliIo, deps: LogsDeps = {}): Promise<number> {
  let parsed;
  try {
    parsed = parseCommandLine(LOGS_COMMAND, argv);
  } catch (err) {
    if (err instanceof UsageError) return usage(io, err.message);
    throw err;
  }
  if (parsed.help) {
    io.stdout(`${LOGS_USAGE}\n`);
    return 0;
  }
  const flags = parsed.values;
  const [target, ...extra] = parsed.positionals;
  if (!target) return usage(io, 'which unit? name a role (prefill, decode, router) or a worker (decode-1)');
  if (extra.length) return usage(io, `unexpected argument ${JSON.stringify(extra[0])}`);
  const count = flags.lines === undefined ? 100 : Number(flags.lines);
  if (!Number.isInteger(count) || count < 0 || count > 20_000)
    return usage(io, `-n needs a whole number of lines from 0 to 20000, got ${JSON.stringify(flags.lines)}`);
  const sinceS = flags.since === undefined ? null : parsePromDurationS(flags.since);
  if (flags.since !== undefined && (sinceS === null || sinceS <= 0))
    return usage(io, `--since needs a duration such as 90s, 15m or 2h, got ${JSON.stringify(flags.since)}`);
  const print = flags.json ? lineJson : lineText;

  return withApp(deps, {}, async (app) => {
    const core = app.core;
    try {
      const summary = await openTarget(app, hostArg(flags.host));
      const deploymentId = summary.deployment.id;
      const services = summary.deployment.services;
      const byWorker = services.find((s) => s.id === target);
      const role = (byWorker?.role ?? target) as Role;
      if (!byWorker && !ROLES.includes(role)) {
        io.stderr(
          `pd-console logs: ${JSON.stringify(oneLine(target))} is neither a role nor a worker of ${summary.deployment.name}; ` +
            `it has ${services.map((s) => s.id ?? s.role).join(', ')}\n`,
        );
        return 2;
      }
      if (!flags.json) io.stdout(`${summary.host.label} — ${oneLine(byWorker?.id ?? role)}\n`);
      if (sinceS !== null) {
        const now = core.now;
        const half = (sinceS * 1000) / 2;
        const r = await app.handlers.journalAround({
          deploymentId,
          ...(byWorker ? { worker: target } : { role }),
          ts: now - half,
          spanMs: half,
        });
        for (const e of r.lines) io.stdout(print(e));
        if (r.truncated)
          io.stderr(`pd-console logs: more lines than the window holds; the newest 20,000 shown\n`);
        if (!flags.follow) return 0;
      }
      const follow = await app.handlers.followJournal({
        deploymentId,
        role,
        ...(byWorker ? { worker: target } : {}),
        lines: sinceS !== null ? 0 : count,
      });
      for (const e of follow.lines) io.stdout(print(e));
      if (!flags.follow) {
        await app.handlers.unfollowJournal({ followId: follow.followId });
        return 0;
      }
      return await new Promise<number>((resolve) => {
        const on = (ev: { followId: string; lines: JournalEntry[]; error?: string; hint?: string }): void => {
          if (ev.followId !== follow.followId) return;
          for (const e of ev.lines) io.stdout(print(e));
          if (ev.error)
            io.stderr(`pd-console logs: ${oneLine(ev.error)}${ev.hint ? ` — ${oneLine(ev.hint)}` : ''}\n`);
        };
        core.on('journal', on);
        const stop = (): void => {
          core.off('journal', on);
          void app.handlers.unfollowJournal({ followId: follow.followId }).finally(() => resolve(0));
        };
        if (deps.signal?.aborted) stop();
        else deps.signal?.addEventListener('abort', stop, { once: true });
      });
    } catch (err) {
      const e = err as Error & { hint?: string };
      io.stderr(`pd-console logs: ${oneLine(e.message)}\n${e.hint ? `hint: ${oneLine(e.hint)}\n` : ''}`);
      return 1;
    }
  });
}
