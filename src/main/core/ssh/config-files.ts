// Reads OpenSSH client config files into directives with file:line, following Include like readconf.c does:
// `~` and relative paths resolved as ssh resolves them, then glob(3) (include-glob.ts). Lines are tokenized by the
// `ssh-config` package (quoting, `=` separators); structure and Include are handled here because ssh-config
// leaves Include unresolved. Whatever ssh would read and this cannot (an unreadable file, a FIFO, a device, a
// file over the size limit, an Include it cannot expand) is a ConfigError naming the Include's file:line, so
// callers never run `ssh -G` on a config they have not seen in full.
import { constants as fsConstants, promises as fs, type Stats } from 'node:fs';
import path from 'node:path';
import SSHConfig, { LineType } from 'ssh-config';
import { expandIncludeGlob } from './include-glob';
import { ConfigError } from './ssh-options';

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
  /**
   * What `~` means in Include: ssh expands it (and resolves relative user Includes in ~/.ssh) through glob(3)'s
   * GLOB_TILDE, which takes $HOME when it is set and the passwd entry's home otherwise (see sshHomes).
   */
  includeHome: string;
  /** Directory relative system Includes resolve against (default /etc/ssh). */
  systemDir?: string;
}

/** readconf.c READCONF_MAX_DEPTH. */
const MAX_INCLUDE_DEPTH = 16;
const MAX_CONFIG_FILE_BYTES = 1024 * 1024;
const MAX_FILES = 256;
const GLOB_LIMITS = { maxMatches: 256, maxDirEntries: 10_000 };
const READ_CHUNK = 64 * 1024;

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

/** An Include line, for messages about the files it names. */
interface IncludeSite {
  file: string;
  line: number;
}
/** The Include line that named a file; undefined for the top-level files. */
type IncludedBy = IncludeSite | undefined;

/** Reads the given top-level files (user config or -F file, then the system config) and everything they include. */
export async function readConfigFiles(
  roots: Array<{ path: string; system: boolean }>,
  opts: ConfigReadOptions,
): Promise<ConfigFile[]> {
  const state: ReadState = { opts, files: 0 };
  const out: ConfigFile[] = [];
  for (const r of roots) out.push(await readOne(r.path, r.system, 0, state, undefined));
  return out;
}

async function readOne(
  file: string,
  system: boolean,
  depth: number,
  state: ReadState,
  includedBy: IncludedBy,
): Promise<ConfigFile> {
  if (++state.files > MAX_FILES)
    throw new ConfigError(
      `more than ${MAX_FILES} config files through Include; is there an Include loop?`,
      includedBy?.file ?? file,
      includedBy?.line,
    );
  const read = await readConfigText(file, includedBy);
  if (read === 'missing') return { path: file, system, exists: false, nodes: [] };
  // ssh opens a directory and reads no lines from it (`Include dir/.*` matches `.` and `..`).
  if (read === 'directory') return { path: file, system, exists: true, nodes: [] };
  const nodes: ConfigNode[] = [];
  const lines = read.split(/\r?\n/);
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
    const at: IncludeSite = { file, line: d.line };
    for (const arg of d.args) {
      const pattern = includePath(arg, system, state.opts, at);
      for (const match of await expandIncludeGlob(pattern, at, GLOB_LIMITS))
        included.push(await readOne(match, system, depth + 1, state, at));
    }
    nodes.push({ kind: 'include', d, files: included });
  }
  return { path: file, system, exists: true, nodes };
}

/** readconf.c: anchor the path (~/.ssh for user files, /etc/ssh for system ones); glob(3) then expands `~`. */
function includePath(arg: string, system: boolean, opts: ConfigReadOptions, at: IncludeSite): string {
  // Newer OpenSSH expands %-tokens and ${VARIABLES} in Include before globbing; older ones take them literally.
  // Either reading could be the installed ssh's, so PD Console cannot know which files it would read.
  if (/%|\$\{/.test(arg))
    throw new ConfigError(
      `Include "${arg}": PD Console does not expand %-tokens or \${VARIABLES} in Include paths (OpenSSH versions differ on them), so it cannot tell which files ssh would read; it does not run ssh on this config`,
      at.file,
      at.line,
      'Write the Include path without % and ${...}.',
    );
  if (arg.startsWith('~')) {
    if (system)
      throw new ConfigError(
        `Include "${arg}": ~ paths are not allowed in the system-wide config (ssh refuses them too)`,
        at.file,
        at.line,
      );
    if (arg !== '~' && !arg.startsWith('~/'))
      throw new ConfigError(
        `Include "${arg}": ~user paths are not supported; write the full path`,
        at.file,
        at.line,
      );
    return opts.includeHome.replace(/[\\/]+$/, '') + arg.slice(1);
  }
  if (path.isAbsolute(arg)) return arg;
  const base = system ? (opts.systemDir ?? '/etc/ssh') : path.join(opts.includeHome, '.ssh');
  return `${base.replace(/[\\/]+$/, '')}${path.sep}${arg}`;
}

const OPEN_FLAGS = fsConstants.O_RDONLY | (fsConstants.O_NONBLOCK ?? 0) | (fsConstants.O_NOCTTY ?? 0);

function notRegular(st: Stats): string | null {
  if (st.isFile()) return null;
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  return 'not a regular file';
}

/**
 * A config file's text, read without blocking and at most MAX_CONFIG_FILE_BYTES of it. Only regular files are
 * read: a FIFO would block ssh and PD Console forever and a device like /dev/zero never ends. The type is
 * checked before opening (no device is opened) and again on the open descriptor (the path may have been
 * swapped in between; O_NONBLOCK keeps that open from waiting on a FIFO).
 */
async function readConfigText(
  file: string,
  includedBy: IncludedBy,
): Promise<string | 'missing' | 'directory'> {
  const what = includedBy ? 'included file' : 'config file';
  const fail = (message: string, hint: string): ConfigError =>
    includedBy
      ? new ConfigError(`${what} ${file} ${message}`, includedBy.file, includedBy.line, hint)
      : new ConfigError(message, file, undefined, hint);
  const refuse = (kind: string): ConfigError =>
    fail(
      `is ${kind}; config files must be regular files, so PD Console does not read it or run ssh on this config`,
      'Point Include (or the config path) at a regular file.',
    );
  const tooLarge = (size: string): ConfigError =>
    fail(
      `is ${size}; config files over ${MAX_CONFIG_FILE_BYTES} bytes are refused`,
      'Split or trim the file.',
    );
  const unreadable = (err: unknown): ConfigError =>
    fail(
      `cannot be read: ${(err as Error).message}; PD Console does not run ssh on a config it cannot read in full`,
      'Fix the file permissions so your user can read it.',
    );
  const gone = (err: unknown): boolean => {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR';
  };

  let st: Stats;
  try {
    st = await fs.stat(file);
  } catch (err) {
    if (gone(err)) return 'missing';
    throw unreadable(err);
  }
  if (st.isDirectory()) return 'directory';
  const kind = notRegular(st);
  if (kind) throw refuse(kind);

  let fh: fs.FileHandle;
  try {
    fh = await fs.open(file, OPEN_FLAGS);
  } catch (err) {
    if (gone(err)) return 'missing';
    throw unreadable(err);
  }
  try {
    const opened = await fh.stat();
    if (opened.isDirectory()) return 'directory';
    const openedKind = notRegular(opened);
    if (openedKind) throw refuse(openedKind);
    if (opened.size > MAX_CONFIG_FILE_BYTES) throw tooLarge(`${opened.size} bytes`);
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.alloc(Math.min(READ_CHUNK, MAX_CONFIG_FILE_BYTES + 1 - total));
      const { bytesRead } = await fh.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      chunks.push(chunk.subarray(0, bytesRead));
      total += bytesRead;
      // The file grew after fstat: stop at the limit rather than follow it.
      if (total > MAX_CONFIG_FILE_BYTES) throw tooLarge(`over ${MAX_CONFIG_FILE_BYTES} bytes`);
    }
    return Buffer.concat(chunks, total).toString('utf8');
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw unreadable(err);
  } finally {
    await fh.close();
  }
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
