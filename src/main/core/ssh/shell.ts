// Building shell command lines for `exec`. sshd hands the string to the user's login shell, so every
// argument is quoted and every name that comes from configuration is checked against a strict pattern first.
import { quote } from 'shell-quote';

/** systemd unit names we accept: letters, digits and @ : . _ - (what systemd itself allows, minus escapes). */
const UNIT_NAME = /^[A-Za-z0-9@:._-]{1,200}$/;

export class UnsafeArgumentError extends Error {
  constructor(what: string, value: string) {
    super(`refusing to send ${what} ${JSON.stringify(value)} to the host: it contains characters outside [A-Za-z0-9@:._-]`);
    this.name = 'UnsafeArgumentError';
  }
}

export function assertUnitName(unit: string): string {
  if (!UNIT_NAME.test(unit) || unit.startsWith('-')) throw new UnsafeArgumentError('unit name', unit);
  return unit;
}

/** Join argv into one shell-safe command line. */
export function shellCommand(argv: readonly string[]): string {
  return quote([...argv]);
}
