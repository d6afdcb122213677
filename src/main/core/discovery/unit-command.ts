// Which SGLang command a unit runs, from the most certain evidence there is: the running process's own argv
// (MainPID or the descendant a wrapper — a script, `bash -c`, `env`, `uv run`, `docker run` — started), else the
// unit's configuration as systemd would apply it (`systemctl cat`: the fragment and its drop-ins with systemd's
// quoting, `Environment=` and the `EnvironmentFile=`s read from the host), else a wrapper script named by
// ExecStart. `systemctl show` prints argv[] joined with plain spaces, so it only ever tells that a unit mentions
// SGLang, never what its words are.
import { splitExecLine, stripExecPrefixes } from './exec-words';
import { findSglangCommand } from './sglang-command';
import { parseEnvFile, parseShowExec, parseUnitCat, type UnitExec } from './unit-text';

export interface ProcessArgv {
  pid: number;
  argv: string[];
}

export interface UnitCommandEvidence {
  unit: string;
  /** The unit as `systemctl cat` gives it (fragment + drop-ins), parsed. */
  cat?: UnitExec;
  /** `systemctl show`'s view: EnvironmentFiles and Environment as loaded, MainPID. */
  show?: UnitExec & { mainPid?: number };
  /** Contents of the EnvironmentFiles that could be read, by path (without the optional "-"). */
  envFiles?: Record<string, string>;
  /** Why an EnvironmentFile could not be read, by path. */
  envFileErrors?: Record<string, string>;
  /** The unit's running processes (MainPID first, then descendants) whose argv was read. */
  processes?: ProcessArgv[];
  /** Wrapper scripts named by ExecStart, read when nothing runs: path → text. */
  scripts?: Record<string, string>;
}

/** What was read about a unit, as text: what read-units.ts gathers and the pure finders take. */
export interface UnitEvidence {
  unit: string;
  /** Output of `systemctl cat UNIT` (unit file and drop-ins, as on disk). */
  cat?: string;
  /** Why `systemctl cat` could not be read. */
  catError?: string;
  /** This unit's block of `systemctl show -p Id,ExecStart,Environment,EnvironmentFiles,MainPID,… UNIT`. */
  show?: string;
  /** ActiveState, if known other than from the show block or list-units. */
  activeState?: string;
  /** Contents of EnvironmentFile= files that could be read, by path. */
  envFiles?: Record<string, string>;
  /** Why an EnvironmentFile could not be read, by path. */
  envFileErrors?: Record<string, string>;
  /** The unit's running processes that mention the program (MainPID first), with their exact argv. */
  processes?: ProcessArgv[];
  /** Wrapper scripts named by ExecStart, read when the unit runs nothing. */
  scripts?: Record<string, string>;
}

/** The evidence parsed: the unit file with systemd's own rules, the show block as systemd prints it. */
export function parseEvidence(ev: UnitEvidence): UnitCommandEvidence {
  return {
    unit: ev.unit,
    ...(ev.cat !== undefined ? { cat: parseUnitCat(ev.cat, ev.unit) } : {}),
    ...(ev.show !== undefined ? { show: parseShowExec(ev.show) } : {}),
    ...(ev.envFiles ? { envFiles: ev.envFiles } : {}),
    ...(ev.envFileErrors ? { envFileErrors: ev.envFileErrors } : {}),
    ...(ev.processes ? { processes: ev.processes } : {}),
    ...(ev.scripts ? { scripts: ev.scripts } : {}),
  };
}

export type CommandSource = 'process' | 'unit-file' | 'script';

/** Recognises the program in an argv (`env` expands the unit's variables in a configured command). */
export type ProgramFinder<T> = (
  argv: readonly string[],
  env: Readonly<Record<string, string>>,
) => T | undefined;

export interface UnitCommand<T> {
  /** The program found, or undefined when no evidence shows it. */
  command?: T;
  source?: CommandSource;
  /** The process that runs it, when source is 'process'. */
  pid?: number;
  /** What the unit's configuration says, when the process was used and the configuration could be read. */
  configured?: T;
  /** The environment the configured command was expanded with (Environment= then EnvironmentFile=s). */
  env: Record<string, string>;
  /** EnvironmentFiles named by the unit that could not be read ("path (why)"). */
  unreadEnvFiles: string[];
  /** EnvironmentFiles that were read. */
  readEnvFiles: string[];
  /** The ExecStart lines that systemd's quoting rules could not split (systemd refuses such a unit too). */
  unsplittable: string[];
}

/** The unit's environment as systemd applies it: Environment=, then EnvironmentFile=s in order (they win). */
function unitEnvironment(ev: UnitCommandEvidence): {
  env: Record<string, string>;
  unread: string[];
  read: string[];
} {
  const base = ev.cat ?? ev.show;
  let env: Record<string, string> = { ...(base?.environment ?? {}) };
  const files = [...new Set([...(ev.show?.environmentFiles ?? []), ...(ev.cat?.environmentFiles ?? [])])];
  const unread: string[] = [];
  const read: string[] = [];
  for (const f of files) {
    const optional = f.startsWith('-');
    const path = f.replace(/^-/, '');
    const text = ev.envFiles?.[path];
    if (text !== undefined) {
      env = { ...env, ...parseEnvFile(text) };
      read.push(path);
    } else if (!optional || ev.envFileErrors?.[path] !== undefined) {
      const why = ev.envFileErrors?.[path];
      // A missing optional file is what "-" is for: not an unknown.
      if (!(optional && why !== undefined && /No such file/i.test(why)))
        unread.push(why ? `${path} (${why})` : path);
    }
  }
  return { env, unread, read };
}

function fromExecLines<T>(
  find: ProgramFinder<T>,
  lines: readonly string[],
  env: Record<string, string>,
  unsplittable: string[],
): T | undefined {
  for (const line of lines) {
    const split = splitExecLine(line);
    if (split.error) {
      unsplittable.push(`${split.error}: ${line.slice(0, 200)}`);
      continue;
    }
    const command = find(stripExecPrefixes(split.argv), env);
    if (command) return command;
  }
  return undefined;
}

/** A wrapper script's text, read as the shell would run it (comments and line continuations understood). */
function fromScripts<T>(
  find: ProgramFinder<T>,
  lines: readonly string[],
  scripts: Record<string, string>,
  env: Record<string, string>,
): T | undefined {
  for (const line of lines) {
    const first = splitExecLine(line).argv[0]?.replace(/^[-@:+!]+/, '');
    const text = first !== undefined ? scripts[first] : undefined;
    if (text === undefined) continue;
    const body = text
      .replace(/\\\n/g, ' ')
      .split('\n')
      .filter((l) => !/^\s*#/.test(l))
      .join('\n');
    // The script's text as a `sh -c` argument: the finders read shell wrappers already.
    const command = find(['/bin/sh', '-c', body], env);
    if (command) return command;
  }
  return undefined;
}

/** The command a unit runs, with what was and was not readable on the way. */
export function resolveUnitCommand<T>(ev: UnitCommandEvidence, find: ProgramFinder<T>): UnitCommand<T> {
  const { env, unread, read } = unitEnvironment(ev);
  const unsplittable: string[] = [];
  const lines = ev.cat?.execStart.length ? ev.cat.execStart : [];
  const configured = fromExecLines(find, lines, env, unsplittable);
  const base = { env, unreadEnvFiles: unread, readEnvFiles: read, unsplittable };
  // A shell that did not `exec` stays the parent of the program it started: the program's own process is the
  // truth, the shell's -c text only the fallback.
  const procs = ev.processes ?? [];
  for (const p of [...procs.filter((x) => !isShell(x.argv)), ...procs.filter((x) => isShell(x.argv))]) {
    // The kernel's argv has every variable expanded already: nothing of the unit's environment applies.
    const command = find(p.argv, {});
    if (!command) continue;
    // What a wrapper exported or `env` set before exec'ing is in the process's environment, not its argv: the
    // wrapper's own words (a shell still running, or the unit's configured command) still tell it.
    const wrappers = procs.filter((x) => x !== p && isShell(x.argv)).map((x) => find(x.argv, {}));
    const inherited = Object.assign({}, ...[configured, ...wrappers].map((c) => inlineEnvOf(c)));
    return {
      ...base,
      command: withInlineEnv(command, inherited),
      source: 'process',
      pid: p.pid,
      ...(configured ? { configured } : {}),
    };
  }
  if (configured) return { ...base, command: configured, source: 'unit-file' };
  const scripted = ev.scripts ? fromScripts(find, lines, ev.scripts, env) : undefined;
  if (scripted) return { ...base, command: scripted, source: 'script' };
  return base;
}

function inlineEnvOf(c: unknown): Record<string, string> {
  const env = (c as { inlineEnv?: Record<string, string> } | undefined)?.inlineEnv;
  return env ?? {};
}

function withInlineEnv<T>(c: T, inherited: Record<string, string>): T {
  const own = inlineEnvOf(c);
  if (Object.keys(inherited).length === 0 || !('inlineEnv' in (c as object))) return c;
  return { ...c, inlineEnv: { ...inherited, ...own } };
}

const SHELLS = /^(ba|da|z|k)?sh$/;
const isShell = (argv: readonly string[]): boolean => SHELLS.test((argv[0] ?? '').replace(/^.*\//, ''));

/** SGLang's servers and routers. */
export const findSglang: ProgramFinder<ReturnType<typeof findSglangCommand> & object> = findSglangCommand;

/** Executables named by ExecStart that may be wrapper scripts worth reading when the unit is not running. */
export function wrapperScriptPaths(cat: UnitExec | undefined): string[] {
  const out: string[] = [];
  for (const line of cat?.execStart ?? []) {
    const first = splitExecLine(line).argv[0]?.replace(/^[-@:+!]+/, '');
    if (!first || !first.startsWith('/')) continue;
    const base = first.slice(first.lastIndexOf('/') + 1);
    // Interpreters and container CLIs carry the command in their own arguments.
    if (/^(python[\d.]*|env|bash|sh|dash|zsh|docker|podman|nerdctl|uv|conda|smg|sglang.*)$/.test(base))
      continue;
    out.push(first);
  }
  return out;
}
