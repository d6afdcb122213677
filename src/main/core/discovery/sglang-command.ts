// Recognising an SGLang server or router in a command line by what it runs, not by the unit's name.
// Handles the wrappers met in practice: `bash -c "source venv && exec python -m …"`, `env VAR=… python …`,
// `VAR=… python …`, `/usr/bin/env python3`, `uv run`/`conda run`, and containers (`docker run … python3 -m …`).

import { parse as shellParse } from 'shell-quote';
import { expandEnv } from './exec-words';

export type SglangKind = 'server' | 'router';

export interface SglangCommand {
  kind: SglangKind;
  /** What identified it, e.g. "python -m sglang.launch_server", "smg". */
  program: string;
  /** Arguments after the program (flags only). */
  args: string[];
  /** Environment set on the command line itself (VAR=… before the program, `export` in a shell wrapper). */
  inlineEnv: Record<string, string>;
  /** Runs inside a container: ports and GPU indices in its flags are the container's view. */
  container?: string;
  /** The router flavour, which decides the metrics it exports. */
  flavour?: 'sglang_router' | 'smg' | 'mini_lb';
  /** $VARs left unresolved. */
  unresolved: string[];
}

const SERVER_MODULES = new Set(['sglang.launch_server']);
const ROUTER_MODULES: Record<string, SglangCommand['flavour']> = {
  'sglang_router.launch_router': 'sglang_router',
  'smg.launch_router': 'smg',
  smg: 'smg',
  // The early PD load balancer (2025): no Prometheus endpoint.
  'sglang.srt.disaggregation.mini_lb': 'mini_lb',
  'sglang.srt.disaggregation.launch_lb': 'mini_lb',
};
const ROUTER_BINARIES: Record<string, SglangCommand['flavour']> = {
  smg: 'smg',
  'sglang-router': 'sglang_router',
  'sgl-model-gateway': 'smg',
};
const SUBCOMMANDS = new Set(['launch', 'serve', 'router', 'run', 'start']);
const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh']);
/** Container clients: what they run is not their descendant on the host (a daemon or shim starts it). */
export const CONTAINERS: ReadonlySet<string> = new Set(['docker', 'podman', 'nerdctl']);

const basename = (p: string) => p.slice(p.lastIndexOf('/') + 1);
const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s;

/** Finds the SGLang program in an ExecStart argv (already split), or undefined when it runs something else. */
export function findSglangCommand(
  argv: readonly string[],
  env: Readonly<Record<string, string>> = {},
): SglangCommand | undefined {
  const expanded = expandEnv(argv, env);
  const direct = findInWords(expanded.argv);
  if (direct) return { ...direct, unresolved: expanded.unresolved };

  // A shell wrapper: the real command is inside the -c string.
  const shellAt = expanded.argv.findIndex((w) => SHELLS.has(basename(w)));
  if (shellAt >= 0) {
    const cAt = expanded.argv.findIndex((w, i) => i > shellAt && /^-[a-z]*c[a-z]*$/.test(w));
    const script = cAt >= 0 ? expanded.argv[cAt + 1] : undefined;
    if (script !== undefined) return fromScript(script, env, expanded.unresolved);
  }
  return undefined;
}

function fromScript(
  script: string,
  env: Readonly<Record<string, string>>,
  unresolved: string[],
): SglangCommand | undefined {
  const scriptEnv: Record<string, string> = { ...env };
  const missing = new Set(unresolved);
  const tokens = shellParse(script, (key: string) => {
    if (scriptEnv[key] !== undefined) return scriptEnv[key];
    missing.add(key);
    return `\${${key}}`;
  });
  // Split into simple commands at operators; `export A=1` / `A=1` commands before the program count as env.
  const commands: string[][] = [[]];
  for (const t of tokens) {
    if (typeof t === 'string') commands[commands.length - 1].push(t);
    else if ('op' in t && t.op === 'glob') commands[commands.length - 1].push(t.pattern);
    else if ('op' in t) commands.push([]);
  }
  const carried: Record<string, string> = {};
  for (const cmd of commands) {
    const found = findInWords(cmd);
    if (found) {
      return { ...found, inlineEnv: { ...carried, ...found.inlineEnv }, unresolved: [...missing] };
    }
    const words = cmd[0] === 'export' ? cmd.slice(1) : cmd;
    if (words.length > 0 && words.every((w) => ASSIGNMENT.test(w))) {
      for (const w of words) {
        const m = ASSIGNMENT.exec(w);
        if (m) carried[m[1]] = m[2];
      }
    }
  }
  return undefined;
}

function findInWords(words: readonly string[]): Omit<SglangCommand, 'unresolved'> | undefined {
  for (let i = 0; i < words.length; i++) {
    const w = words[i];
    const base = basename(w);
    let kind: SglangKind | undefined;
    let program = '';
    let argsFrom = -1;
    let flavour: SglangCommand['flavour'];
    if (w === '-m' && i + 1 < words.length) {
      const mod = words[i + 1];
      if (SERVER_MODULES.has(mod)) kind = 'server';
      else if (Object.hasOwn(ROUTER_MODULES, mod)) {
        kind = 'router';
        flavour = ROUTER_MODULES[mod];
      }
      program = `python -m ${mod}`;
      argsFrom = i + 2;
    } else if (w.endsWith('sglang/launch_server.py')) {
      kind = 'server';
      program = w;
      argsFrom = i + 1;
    } else if (w.endsWith('sglang_router/launch_router.py')) {
      kind = 'router';
      flavour = 'sglang_router';
      program = w;
      argsFrom = i + 1;
    } else if (base === 'sglang' && words[i + 1] === 'serve') {
      kind = 'server';
      program = 'sglang serve';
      argsFrom = i + 2;
    } else if (Object.hasOwn(ROUTER_BINARIES, base) && !w.startsWith('-')) {
      kind = 'router';
      flavour = ROUTER_BINARIES[base];
      program = base;
      argsFrom = i + 1;
      if (SUBCOMMANDS.has(words[argsFrom] ?? '')) {
        program += ` ${words[argsFrom]}`;
        argsFrom++;
      }
    }
    if (!kind) continue;
    const before = words.slice(0, i);
    const inlineEnv: Record<string, string> = {};
    for (let k = 0; k < before.length; k++) {
      const m = ASSIGNMENT.exec(before[k]);
      // `docker run -e NAME=value` counts too: the process sees it either way.
      if (m && !before[k].startsWith('-')) inlineEnv[m[1]] = m[2];
    }
    const container = before.map(basename).find((b) => CONTAINERS.has(b));
    return {
      kind,
      program,
      args: words.slice(argsFrom),
      inlineEnv,
      ...(container ? { container } : {}),
      ...(flavour ? { flavour } : {}),
    };
  }
  return undefined;
}
