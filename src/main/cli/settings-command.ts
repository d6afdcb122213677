// `pd-console settings show|export FILE|import FILE [--yes]`: the app's settings file (settings.json in the data
// folder) from a terminal — what is in effect, a copy to share, or a shared copy taken in after showing what it
// changes. The same store and the same checks as the app: a broken file is reported at path:line:column and left
// alone.
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { SettingsService } from '../core/services/settings';
import { readSettingsImport } from '../core/config/settings-store';
import { dataDir } from '../paths';
import { validateArgs } from '@shared/schemas';
import { oneLine } from '@shared/display-text';
import { defineCommand, parseCommandLine, usageText, UsageError } from './cli-args';

export const SETTINGS_USAGE = `usage: pd-console settings show [--json]
       pd-console settings export FILE|-
       pd-console settings import FILE [--yes]
       pd-console settings choose HOST prefill|decode|router UNIT|--clear

  show     where the settings file is, whether it is in use, and what is in effect (--json: the whole file)
  export   write the settings in effect to FILE (a new file; - for stdout), to share alert rules with a team
  import   show what FILE would change; with --yes, take it in (the previous file is kept as settings.json.bak).
           Sections FILE leaves out keep their current values.
  choose   when several units on HOST (its id in hosts.json, or demo) claim a role, use UNIT from the next
           connect on (--clear: let discovery pick again)
exit status: 0 done · 1 the file (or FILE) cannot be used · 2 bad usage
`;

export interface SettingsCliIo {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
}

export async function settingsCommand(
  argv: string[],
  io: SettingsCliIo,
  opts: { dataDir?: string } = {},
): Promise<number> {
  const usage = (why: string): number => {
    io.stderr(usageText(SETTINGS_COMMAND, why));
    return 2;
  };
  let parsed;
  try {
    parsed = parseCommandLine(SETTINGS_COMMAND, argv);
  } catch (err) {
    if (err instanceof UsageError) return usage(err.message);
    throw err;
  }
  const [sub, ...files] = parsed.positionals;
  if (parsed.help || !sub) {
    io.stdout(SETTINGS_USAGE);
    return parsed.help ? 0 : 2;
  }
  if (!isSubcommand(sub)) return usage(`unknown subcommand ${JSON.stringify(sub)}`);
  const given = Object.keys(parsed.values) as Array<keyof typeof SETTINGS_COMMAND.options>;
  const stray = given.find((f) => !SUBCOMMAND_OPTIONS[sub].includes(f));
  if (stray) return usage(`--${stray} does not apply to settings ${sub}`);
  const flags = parsed.values;
  const svc = new SettingsService(
    { emit: () => undefined },
    join(opts.dataDir ?? dataDir(), 'settings.json'),
  );
  const api = svc.handlers();
  const state = svc.state();
  const warnProblem = (): void => {
    if (state.problem)
      io.stderr(`pd-console settings: ${state.problem.message}\nhint: ${state.problem.hint}\n`);
  };

  if (sub === 'show') {
    if (files.length) return usage('show takes only --json');
    warnProblem();
    if (flags.json) io.stdout(`${JSON.stringify(state, null, 2)}\n`);
    else io.stdout(showText(state));
    return state.problem ? 1 : 0;
  }
  if (sub === 'export') {
    if (files.length !== 1) return usage('export needs one FILE (or - for stdout)');
    warnProblem();
    const { text } = await api.exportSettings({});
    if (files[0] === '-') io.stdout(text);
    else {
      try {
        await fs.writeFile(files[0], text, { flag: 'wx', mode: 0o600 });
      } catch (err) {
        io.stderr(`pd-console settings: cannot write ${files[0]}: ${(err as Error).message}\n`);
        return 1;
      }
      io.stderr(`wrote ${files[0]}\n`);
    }
    return 0;
  }
  if (sub === 'import') {
    if (files.length !== 1) return usage('import needs one FILE');
    let text: string;
    try {
      text = await readSettingsImport(files[0]);
    } catch (err) {
      const e = err as Error & { hint?: string };
      io.stderr(`pd-console settings: ${e.message}\n${e.hint ? `hint: ${e.hint}\n` : ''}`);
      return 1;
    }
    const yes = flags.yes === true;
    try {
      const r = await api.importSettings({ text, dryRun: !yes });
      if (r.changes.length === 0)
        io.stdout(`${files[0]} holds the settings in effect now: nothing to change.\n`);
      else {
        io.stdout(`${files[0]} ${yes ? 'changed' : 'would change'} ${r.changes.length} setting(s):\n`);
        for (const c of r.changes) io.stdout(`  ${oneLine(`${c.path}: ${c.from} → ${c.to}`)}\n`);
      }
      if (!yes && r.changes.length) io.stdout('Nothing changed yet: run again with --yes to import.\n');
      if (r.backup) io.stdout(`The previous file is kept as ${r.backup}.\n`);
      return 0;
    } catch (err) {
      const e = err as Error & { hint?: string };
      io.stderr(`pd-console settings: ${e.message}\n${e.hint ? `hint: ${e.hint}\n` : ''}`);
      return 1;
    }
  }
  if (sub === 'choose') {
    const [hostId, role, unit] = files;
    const clear = flags.clear === true;
    if (!hostId || !role || (clear ? unit !== undefined : unit === undefined) || files.length > 3)
      return usage('choose needs HOST ROLE UNIT (or HOST ROLE --clear)');
    let args;
    try {
      args = validateArgs('setDiscoveryChoice', { hostId, role, unit: clear ? null : unit });
    } catch (err) {
      return usage((err as Error).message);
    }
    warnProblem();
    const after = await api.setDiscoveryChoice(args);
    if (after.problem) return 1;
    io.stdout(
      clear
        ? `discovery picks the ${role} unit on ${hostId} again\n`
        : `on ${hostId}, ${role} is ${unit} from the next connect on\n`,
    );
    return 0;
  }
  return usage(`unknown subcommand ${JSON.stringify(sub)}`);
}

export const SETTINGS_COMMAND = defineCommand({
  name: 'settings',
  usage: SETTINGS_USAGE,
  options: { json: { type: 'boolean' }, yes: { type: 'boolean' }, clear: { type: 'boolean' } },
});

/** Which of the options each subcommand takes. */
const SUBCOMMAND_OPTIONS: Record<
  'show' | 'export' | 'import' | 'choose',
  ReadonlyArray<keyof typeof SETTINGS_COMMAND.options>
> = { show: ['json'], export: [], import: ['yes'], choose: ['clear'] };

function isSubcommand(s: string): s is keyof typeof SUBCOMMAND_OPTIONS {
  return Object.hasOwn(SUBCOMMAND_OPTIONS, s);
}

function showText(s: ReturnType<SettingsService['state']>): string {
  const x = s.settings;
  const own = Object.keys(x.alerts.deployments);
  const lines = [
    `settings file: ${s.file}${s.problem ? ' (NOT USED: running on defaults)' : ''}`,
    s.migratedFrom !== undefined
      ? `format version ${s.migratedFrom}; rewritten as version 1 on the next change`
      : '',
    `alert rules: ${x.alerts.rules.filter((r) => r.enabled).length} of ${x.alerts.rules.length} on` +
      (own.length ? `; own rules for ${own.join(', ')}` : ''),
    ...x.alerts.rules.map(
      (r) =>
        `  ${r.enabled ? 'on ' : 'off'} ${r.id} (${r.severity}${r.threshold !== undefined ? `, threshold ${r.threshold}` : ''}` +
        `${r.forS !== undefined ? `, for ${r.forS} s` : ''}${r.windowS !== undefined ? `, window ${r.windowS} s` : ''})`,
    ),
    `restart: ${x.restart.readOnly ? 'read-only, ' : ''}${x.restart.polkit ? 'polkit' : 'sudo -n'}, stack ${x.restart.stackOrder}` +
      `${x.restart.stackIncludesRouter ? ' then router' : ''}; server health within ${x.restart.timeouts.server.healthMs / 60_000} min`,
    `recording: ${x.recording.enabled ? 'on' : 'off'}, keep up to ${(x.recording.maxTotalBytes / 1024 ** 3).toFixed(2)} GiB`,
    `theme: ${x.ui.theme}; charts open on the last ${x.ui.chartRange}`,
    ...Object.entries(x.discovery.choices).flatMap(([host, roles]) =>
      Object.entries(roles).map(([role, unit]) => `discovery: on ${host}, ${role} is ${unit}`),
    ),
  ];
  return `${lines.filter(Boolean).join('\n')}\n`;
}
