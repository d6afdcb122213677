// Building shell command lines for `exec`. sshd hands the string to the user's login shell, so every
// argument is quoted and every name that comes from configuration is checked against a strict pattern first.

/** systemd unit names we accept: letters, digits and @ : . _ - (what systemd itself allows, minus escapes). */
const UNIT_NAME = /^[A-Za-z0-9@:._-]{1,200}$/;

export class UnsafeArgumentError extends Error {
  constructor(what: string, value: string) {
    super(
      `refusing to send ${what} ${JSON.stringify(value)} to the host: it contains characters outside [A-Za-z0-9@:._-]`,
    );
    this.name = 'UnsafeArgumentError';
  }
}

export function assertUnitName(unit: string): string {
  if (!UNIT_NAME.test(unit) || unit.startsWith('-')) throw new UnsafeArgumentError('unit name', unit);
  return unit;
}

/** Characters that never need quoting in a POSIX shell word (the set Python's shlex.quote leaves alone). */
const SAFE_WORD = /^[A-Za-z0-9@%+=:,./_-]+$/;

/** Quote one word for a POSIX shell: single quotes, with embedded ' written as '\''. */
export function shellQuote(word: string): string {
  if (SAFE_WORD.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * Join argv into one shell-safe command line. shell-quote's quote() is also safe but backslash-escapes
 * `=` and `,`, which makes the exact command we show operators before a restart hard to read.
 */
export function shellCommand(argv: readonly string[]): string {
  return argv.map(shellQuote).join(' ');
}
