// Reads OpenSSH client config files into directives with file:line, following Include (globs, ~, paths relative
// to ~/.ssh or /etc/ssh) like readconf.c does. Lines are tokenized by the `ssh-config` package (quoting, `=`
// separators); structure and Include are handled here because ssh-config leaves Include unresolved.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import SSHConfig, { LineType } from 'ssh-config';
import { ConfigError, expandTilde } from './ssh-options';
import { wildcardMatch } from './patterns';

export interface ConfigDirective {
  file: string;
  line: number;
  /** Lowercased keyword. */
  keyword: string;
  args: string[];
}

export type ConfigNode =
  { kind: 'directive'; d: ConfigDirective } | { kind: 'include'; d: ConfigDirective; files: ConfigFile[] };

export interface ConfigFile {
  path: string;
  /** Read from the system-wide config (relative Includes resolve against /etc/ssh). */
  system: boolean;
  /** False when the file does not exist (a missing user config is normal). */
  exists: boolean;
  nodes: ConfigNode[];
}

export interface ConfigReadOptions {
  homeDir: string;
  /** Directory relative system Includes resolve against (default /etc/ssh). */
  systemDir?: string;
}

/** readconf.c READCONF_MAX_DEPTH. */
const MAX_INCLUDE_DEPTH = 16;
const MAX_FILE_BYTES = 1024 * 1024;
const MAX_FILES = 256;
const MAX_GLOB_MATCHES = 256;

/** Tokenizes one config line; null for blank lines and comments. Throws ConfigError naming file:line. */
export function tokenizeConfigLine(text: string, file: string, line: number): ConfigDirective | null {
  if (/^\s*(#|$)/.test(text)) return null;
  let parsed: SSHConfig;
  try {
    parsed = SSHConfig.parse(text);
  } catch (err) {
    // ssh-config throws plain Errors (unbalanced quotes, Match without a value, even TypeErrors on `Host`
    // with nothing after it); all of them mean this one line is malformed.
    throw new ConfigError(
      `cannot parse "${text.trim().slice(0, 120)}": ${(err as Error).message}`,
      file,
      line,
    );
  }
  const first = parsed.find((l) => l.type === LineType.DIRECTIVE);
  if (!first || first.type !== LineType.DIRECTIVE || !first.param) return null;
  const keyword = first.param.toLowerCase();
  if (!/^[a-z][a-z0-9]*$/.test(keyword))
    throw new ConfigError(`"${first.param}" is not a configuration keyword`, file, line);
  const raw = first.value;
  // ssh-config splits only its own list keywords into words; every other value arrives as one string.
  const args = Array.isArray(raw) ? raw.map((v) => v.val) : raw === '' ? [] : [raw];
  return { file, line, keyword, args };
}

interface ReadState {
  opts: ConfigReadOptions;
  files: number;
}

/** Reads the given top-level files (user config or -F file, then the system config) and everything they include. */
export async function readConfigFiles(
  roots: Array<{ path: string; system: boolean }>,
  opts: ConfigReadOptions,
): Promise<ConfigFile[]> {
  const state: ReadState = { opts, files: 0 };
  const out: ConfigFile[] = [];
  for (const r of roots) out.push(await readOne(r.path, r.system, 0, state, true));
  return out;
}

async function readOne(
  file: string,
  system: boolean,
  depth: number,
  state: ReadState,
  top: boolean,
): Promise<ConfigFile> {
  if (++state.files > MAX_FILES)
    throw new ConfigError(
      `more than ${MAX_FILES} config files through Include; is there an Include loop?`,
      file,
    );
  let text: string;
  try {
    const st = await fs.stat(file);
    if (st.isDirectory()) throw new ConfigError('is a directory, not a config file', file);
    if (st.size > MAX_FILE_BYTES)
      throw new ConfigError(
        `is ${st.size} bytes; config files over ${MAX_FILE_BYTES} bytes are refused`,
        file,
      );
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ENOENT' || e.code === 'ENOTDIR') return { path: file, system, exists: false, nodes: [] };
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(
      `cannot read ${top ? 'config file' : 'included file'}: ${e.message}`,
      file,
      undefined,
      'Fix the file permissions so your user can read it.',
    );
  }
  const nodes: ConfigNode[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const d = tokenizeConfigLine(lines[i], file, i + 1);
    if (!d) continue;
    if (d.keyword !== 'include') {
      nodes.push({ kind: 'directive', d });
      continue;
    }
    if (d.args.length === 0) throw new ConfigError('Include needs a file name or pattern', file, d.line);
    if (depth + 1 > MAX_INCLUDE_DEPTH)
      throw new ConfigError(
        `Include nested more than ${MAX_INCLUDE_DEPTH} levels deep (a loop?)`,
        file,
        d.line,
      );
    const included: ConfigFile[] = [];
    for (const arg of d.args) {
      const pattern = includePath(arg, system, state.opts, file, d.line);
      for (const match of await expandGlob(pattern, file, d.line))
        included.push(await readOne(match, system, depth + 1, state, false));
    }
    nodes.push({ kind: 'include', d, files: included });
  }
  return { path: file, system, exists: true, nodes };
}

function includePath(
  arg: string,
  system: boolean,
  opts: ConfigReadOptions,
  file: string,
  line: number,
): string {
  let p: string;
  try {
    p = expandTilde(arg, opts.homeDir, 'Include');
  } catch (err) {
    throw new ConfigError((err as Error).message, file, line);
  }
  if (path.isAbsolute(p)) return p;
  // ssh_config(5): relative Include paths are in ~/.ssh for user files and /etc/ssh for system files.
  return path.join(system ? (opts.systemDir ?? '/etc/ssh') : path.join(opts.homeDir, '.ssh'), p);
}

/** glob(3) for Include: `*` and `?` in any path segment, results sorted, missing directories match nothing. */
async function expandGlob(pattern: string, file: string, line: number): Promise<string[]> {
  const parsed = path.parse(pattern);
  const segments = pattern
    .slice(parsed.root.length)
    .split(/[\\/]+/)
    .filter(Boolean);
  let bases = [parsed.root || '.'];
  for (const seg of segments) {
    const next: string[] = [];
    const wild = /[*?]/.test(seg);
    for (const base of bases) {
      if (!wild) {
        next.push(path.join(base, seg));
        continue;
      }
      let entries: string[];
      try {
        entries = await fs.readdir(base);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' || code === 'ENOTDIR') continue;
        throw new ConfigError(
          `Include "${pattern}": cannot list ${base}: ${(err as Error).message}`,
          file,
          line,
        );
      }
      // glob(3) does not let wildcards match a leading dot.
      for (const e of entries.sort())
        if (!e.startsWith('.') && wildcardMatch(e, seg, false)) next.push(path.join(base, e));
    }
    bases = next;
    if (bases.length > MAX_GLOB_MATCHES)
      throw new ConfigError(`Include "${pattern}" matches more than ${MAX_GLOB_MATCHES} files`, file, line);
  }
  return bases;
}

/** Every `Match exec` line in the files and their includes, whether or not it would apply to a host. */
export function findMatchExec(files: ConfigFile[]): ConfigDirective[] {
  const found: ConfigDirective[] = [];
  const walk = (f: ConfigFile): void => {
    for (const n of f.nodes) {
      if (n.kind === 'include') n.files.forEach(walk);
      else if (n.d.keyword === 'match' && n.d.args.some((a) => /^!?exec$/i.test(a))) found.push(n.d);
    }
  };
  files.forEach(walk);
  return found;
}

/** Paths of all files that exist in the tree, for "checked …" messages. */
export function existingFiles(files: ConfigFile[]): string[] {
  const out: string[] = [];
  const walk = (f: ConfigFile): void => {
    if (f.exists) out.push(f.path);
    for (const n of f.nodes) if (n.kind === 'include') n.files.forEach(walk);
  };
  files.forEach(walk);
  return out;
}
