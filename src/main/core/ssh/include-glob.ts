// glob(3) the way OpenSSH's Include calls it (`glob(path, GLOB_TILDE)`, after config-files.ts has resolved `~` and
// relative paths), with the rules of the BSD glob OpenSSH builds in where the C library's lacks gl_matchc (glibc):
// `*`, `?` and bracket expressions (`[a-c]`, `[!a]`, `[[:digit:]]`; `[^a]` is not a negation there) in any path
// segment, backslash escapes, no braces or extglobs, a leading dot matched only by a literal dot (so `.*` does
// match `.` and `..`, as readdir lists them), names compared byte by byte (`?` is one byte of a UTF-8 name), and
// the matches sorted by byte value. Segments are matched by minimatch, which is not subject to backtracking
// blow-ups on patterns like `*a*a*a*b`. Anything glob(3) would expand but this cannot list is an error, so the
// caller never guesses at what ssh reads. test/ssh/ssh-config-include.test.ts checks these rules against the
// real `ssh -G`.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { Minimatch, type MinimatchOptions } from 'minimatch';
import { ConfigError } from './ssh-options';

export interface IncludeGlobLimits {
  /** Paths one Include pattern may expand to. */
  maxMatches: number;
  /** Entries read from one directory while matching a segment. */
  maxDirEntries: number;
}

const MATCH_OPTIONS: MinimatchOptions = {
  // glob's leading-dot rule is applied in segmentMatcher, so minimatch may let wildcards match dots.
  dot: true,
  nobrace: true,
  noext: true,
  noglobstar: true,
  nonegate: true,
  nocomment: true,
  nocase: false,
  // A segment never holds a separator here; on every platform a backslash in it is glob(3)'s escape.
  platform: 'linux',
};

const WIN32 = path.sep === '\\';
const SEPARATORS = WIN32 ? /[\\/]+/ : /\/+/;

/** Whether glob(3) would treat this segment as a pattern rather than a literal name. */
function isPattern(segment: string): boolean {
  return /[*?[]/.test(segment);
}

/** A literal segment with glob(3)'s backslash escapes removed. */
function unescapeSegment(segment: string): string {
  return WIN32 ? segment : segment.replace(/\\(.)/gs, '$1');
}

/** OpenSSH's glob compares bytes (`?` is one byte of a UTF-8 name); a Latin-1 string has one char per byte. */
function bytes(s: string): string {
  return Buffer.from(s, 'utf8').toString('latin1');
}

/**
 * `[^…]` is a class whose first member is `^` in OpenSSH's glob, and a negated class in minimatch. The plain
 * form is rewritten with the `^` last; forms where moving it would change the class are refused.
 */
function literalCaret(segment: string, refuse: (why: string) => never): string {
  let out = '';
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i];
    if (c === '\\') {
      out += segment.slice(i, i + 2);
      i++;
      continue;
    }
    const close = c === '[' && segment[i + 1] === '^' ? segment.indexOf(']', i + 2) : -1;
    if (close < 0) {
      out += c;
      continue;
    }
    const members = segment.slice(i + 2, close);
    if (members === '') out += '\\^';
    else if (/^[!-]|[\\[]|-$/.test(members))
      refuse(
        `"[^${members}]" (in OpenSSH a class of "^" and more, not a negation) in a form PD Console cannot match`,
      );
    else out += `[${members}^]`;
    i = close;
  }
  return out;
}

/** Whether glob(3) matches `name` (any directory entry, `.` and `..` included) with this pattern segment. */
function segmentMatcher(raw: string, refuse: (why: string) => never): (name: string) => boolean {
  const segment = literalCaret(bytes(raw), refuse);
  const mm = new Minimatch(segment, MATCH_OPTIONS);
  // After a literal leading dot (escaped or not), the rest of the pattern is matched without the dot rule.
  const rest = segment.startsWith('.')
    ? segment.slice(1)
    : segment.startsWith('\\.')
      ? segment.slice(2)
      : null;
  // minimatch never lets a wildcard match the names `.` and `..`; glob(3) does. Matching "x" + rest against
  // "x" + (name without its first dot) asks glob's question without those names.
  const dots = rest === null ? null : new Minimatch(`x${rest}`, MATCH_OPTIONS);
  return (name) => {
    if (name === '.' || name === '..') return dots !== null && dots.match(`x${name.slice(1)}`);
    if (name.startsWith('.') && rest === null) return false;
    return mm.match(bytes(name));
  };
}

function joinPath(base: string, name: string): string {
  return base.endsWith(path.sep) || base.endsWith('/') ? base + name : base + path.sep + name;
}

function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/**
 * The files an Include pattern names, sorted; [] when nothing matches (ssh skips such an Include silently).
 * `pattern` is absolute. Throws ConfigError naming `file:line` when a directory on the way cannot be listed
 * or the expansion is over the limits.
 */
export async function expandIncludeGlob(
  pattern: string,
  where: { file: string; line: number },
  limits: IncludeGlobLimits,
): Promise<string[]> {
  const root = path.parse(pattern).root;
  const segments = pattern.slice(root.length).split(SEPARATORS).filter(Boolean);
  let bases = [root];
  for (const segment of segments) {
    const next: string[] = [];
    if (!isPattern(segment)) {
      const name = unescapeSegment(segment);
      for (const base of bases) next.push(joinPath(base, name));
    } else {
      const matches = segmentMatcher(segment, (why) => {
        throw new ConfigError(
          `Include "${pattern}": ${why}, so it cannot tell which files ssh would read; it does not run ssh on this config`,
          where.file,
          where.line,
          'Rewrite the pattern (e.g. move the ^ out of first place in the class).',
        );
      });
      for (const base of bases)
        for (const name of await listDirectory(base, pattern, where, limits))
          if (matches(name)) next.push(joinPath(base, name));
    }
    if (next.length > limits.maxMatches)
      throw new ConfigError(
        `Include "${pattern}" matches more than ${limits.maxMatches} paths; PD Console reads at most that many`,
        where.file,
        where.line,
        'Narrow the Include pattern.',
      );
    bases = next;
  }
  return bases.sort(byteOrder);
}

/** Entry names of a directory as readdir(3) gives them to glob(3): with `.` and `..`. */
async function listDirectory(
  dir: string,
  pattern: string,
  where: { file: string; line: number },
  limits: IncludeGlobLimits,
): Promise<string[]> {
  let handle;
  try {
    handle = await fs.opendir(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // A directory that is not there (or is a file) matches nothing, for glob(3) too.
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw new ConfigError(
      `Include "${pattern}": cannot list ${dir}: ${(err as Error).message}; PD Console cannot tell which files ssh would read, so it does not run ssh`,
      where.file,
      where.line,
      `Make ${dir} readable by your user, or remove the Include.`,
    );
  }
  const names = ['.', '..'];
  // Leaving the loop early (the limit, a read error) closes the directory through the iterator.
  for await (const entry of handle) {
    if (names.length - 2 >= limits.maxDirEntries)
      throw new ConfigError(
        `Include "${pattern}": ${dir} has more than ${limits.maxDirEntries} entries; PD Console does not scan directories that large`,
        where.file,
        where.line,
        'Point the Include at a smaller directory.',
      );
    names.push(entry.name);
  }
  return names;
}
