// Splitting a systemd ExecStart= command line into words, and the two substitutions systemd applies to it:
// %-specifiers (at unit load) and $VAR / ${VAR} environment references (at exec). systemd.service(5),
// "Command lines": words are separated by whitespace, double or single quotes group, C-style backslash
// escapes are decoded, ${VAR} expands inside a word and a bare $VAR word splits on whitespace.

export interface SplitResult {
  argv: string[];
  /** Set when the line could not be split (unterminated quote, dangling escape). */
  error?: string;
}

const C_ESCAPES: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  a: '\x07',
  b: '\b',
  f: '\f',
  v: '\v',
  s: ' ',
};

export function splitExecLine(line: string): SplitResult {
  const argv: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '\\') {
      const n = line[i + 1];
      if (n === undefined) return { argv, error: 'command line ends with a lone backslash' };
      const hex = /^x([0-9a-fA-F]{2})|^u([0-9a-fA-F]{4})|^U([0-9a-fA-F]{8})|^([0-7]{3})/.exec(
        line.slice(i + 1),
      );
      if (hex) {
        const code = hex[4] !== undefined ? parseInt(hex[4], 8) : parseInt(hex[1] ?? hex[2] ?? hex[3], 16);
        word += String.fromCodePoint(code);
        i += hex[0].length;
      } else if (n in C_ESCAPES || n === '\\' || n === '"' || n === "'") {
        word += C_ESCAPES[n] ?? n;
        i += 1;
      } else {
        // systemd warns "Ignoring unknown escape sequences" and keeps the backslash and the character as they
        // are (a backslash-space does not split the word).
        word += `\\${n}`;
        i += 1;
      }
      inWord = true;
      continue;
    }
    if (quote) {
      if (c === quote) quote = null;
      else word += c;
      continue;
    }
    if (c === '"' || c === "'") {
      quote = c;
      inWord = true;
      continue;
    }
    if (/\s/.test(c)) {
      if (inWord) argv.push(word);
      word = '';
      inWord = false;
      continue;
    }
    word += c;
    inWord = true;
  }
  if (quote) return { argv, error: `unterminated ${quote} quote` };
  if (inWord) argv.push(word);
  return { argv };
}

/** Strips systemd's executable prefixes (-, @, :, +, !, !!) from the first word. */
export function stripExecPrefixes(argv: string[]): string[] {
  if (argv.length === 0) return argv;
  const m = /^[-@:+!]+/.exec(argv[0]);
  if (!m) return argv;
  const first = argv[0].slice(m[0].length);
  // "@" means the next word is argv[0] as shown to the process; the executable is still the first word.
  const rest = argv.slice(1);
  if (m[0].includes('@') && rest.length > 0) rest.shift();
  return first === '' ? rest : [first, ...rest];
}

export interface ExpandResult {
  argv: string[];
  /** Variables referenced but not defined in the environment we know (maybe in an EnvironmentFile). */
  unresolved: string[];
}

/** Expands ${VAR} inside words and splits bare $VAR words, like systemd does at exec time. */
export function expandEnv(argv: readonly string[], env: Readonly<Record<string, string>>): ExpandResult {
  const unresolved = new Set<string>();
  const out: string[] = [];
  for (const w of argv) {
    const bare = /^\$([A-Za-z_][A-Za-z0-9_]*)$/.exec(w);
    if (bare) {
      const v = env[bare[1]];
      if (v === undefined) {
        unresolved.add(bare[1]);
        out.push(w);
      } else out.push(...v.split(/\s+/).filter((x) => x !== ''));
      continue;
    }
    out.push(
      w.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (m, name: string | undefined) => {
        if (name === undefined) return '$';
        const v = env[name];
        if (v === undefined) {
          unresolved.add(name);
          return m;
        }
        return v;
      }),
    );
  }
  return { argv: out, unresolved: [...unresolved] };
}

/**
 * Resolves the %-specifiers that depend only on the unit name (systemd.unit(5) "Specifiers"):
 * %n full name, %N name without suffix, %p prefix, %P unescaped prefix, %i instance, %I unescaped instance,
 * %j/%J last dash-component of the prefix, %f "/" + unescaped instance (or prefix), %%. Others are left alone.
 */
export function expandSpecifiers(text: string, unit: string): string {
  const dot = unit.lastIndexOf('.');
  const nameNoSuffix = dot > 0 ? unit.slice(0, dot) : unit;
  const at = nameNoSuffix.indexOf('@');
  const prefix = at >= 0 ? nameNoSuffix.slice(0, at) : nameNoSuffix;
  const instance = at >= 0 ? nameNoSuffix.slice(at + 1) : '';
  const dash = prefix.lastIndexOf('-');
  const j = dash >= 0 ? prefix.slice(dash + 1) : prefix;
  const map: Record<string, string> = {
    n: unit,
    N: nameNoSuffix,
    p: prefix,
    P: unescapeUnit(prefix),
    i: instance,
    I: unescapeUnit(instance),
    j,
    J: unescapeUnit(j),
    f: `/${unescapeUnit(instance || prefix)}`,
    '%': '%',
  };
  return text.replace(/%(.)/g, (m, c: string) => map[c] ?? m);
}

/** systemd-escape reversed: "-" is "/", "\xNN" is a byte. */
function unescapeUnit(s: string): string {
  return s
    .replace(/-/g, '/')
    .replace(/\\x([0-9a-fA-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
}
