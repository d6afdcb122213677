// The one command-line parser of `pd-console`: node:util parseArgs in strict mode over the options each command
// declares once (name, type, short letter), so `--flag value` and `--flag=value` mean the same, flags may come
// before or after the positionals, a boolean flag never takes the next word, and an unknown flag, a flag without
// its value or a value given twice are refused with the command's usage (exit 2) — never read as something else.
import { parseArgs } from 'node:util';

export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  /** Repeatable: the values in order (`--add-host a --add-host b`). */
  multiple?: boolean;
  /** What the value is, for "--X needs …" (default "a value"). */
  needs?: string;
}

export type OptionSpecs = Record<string, OptionSpec>;

export interface CommandSpec<O extends OptionSpecs = OptionSpecs> {
  /** As the operator types it: "status", "settings", "export". */
  name: string;
  /** The usage text printed on --help and under every usage error. */
  usage: string;
  options: O;
}

type ValueOf<S extends OptionSpec> = S['type'] extends 'boolean' ? boolean : string;
export type OptionValues<O extends OptionSpecs> = {
  [K in keyof O]?: O[K]['multiple'] extends true ? ValueOf<O[K]>[] : ValueOf<O[K]>;
};

export interface ParsedArgs<O extends OptionSpecs> {
  values: OptionValues<O>;
  positionals: string[];
  /** --help or -h was given: print the usage and do nothing else. */
  help: boolean;
}

/** A command's options, with `--help`/`-h` that every command has. */
export function defineCommand<const O extends OptionSpecs>(spec: CommandSpec<O>): CommandSpec<O> {
  if ('help' in spec.options) throw new Error(`${spec.name}: --help is every command's own`);
  return spec;
}

/** Bad usage: the message names the flag and what it needs; the command prints it over its usage, exit 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

const HELP: OptionSpec = { type: 'boolean', short: 'h' };

/** Parses `argv` (the words after the command's name); throws UsageError with a message an operator can act on. */
export function parseCommandLine<O extends OptionSpecs>(spec: CommandSpec<O>, argv: string[]): ParsedArgs<O> {
  const options = parseArgsOptions(spec.options);
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, strict: true, allowPositionals: true, tokens: true });
  } catch (err) {
    // Asking for help is answered even when the rest of the line is wrong.
    if (argv.some((a) => a === '--help' || a === '-h')) return { values: {}, positionals: [], help: true };
    throw new UsageError(whyRefused(spec.options, argv, err as Error));
  }
  const seen = new Map<string, string | undefined>();
  for (const t of parsed.tokens) {
    if (t.kind !== 'option' || spec.options[t.name]?.multiple) continue;
    if (seen.has(t.name) && seen.get(t.name) !== t.value)
      throw new UsageError(`--${t.name} given twice with different values`);
    seen.set(t.name, t.value);
  }
  const { help, ...values } = parsed.values as Record<string, unknown>;
  return { values: values as OptionValues<O>, positionals: parsed.positionals, help: help === true };
}

/**
 * parseArgs' error in the operator's terms. The strict parse decides; a lenient one over the same words finds the
 * word at fault, so the message names it the way it was typed.
 */
function whyRefused(specs: OptionSpecs, argv: string[], err: Error): string {
  const options = parseArgsOptions(specs);
  const { tokens } = parseArgs({ args: argv, options, strict: false, allowPositionals: true, tokens: true });
  for (const t of tokens) {
    if (t.kind !== 'option') continue;
    const o = t.name === 'help' ? HELP : specs[t.name];
    if (!o) return `unknown option ${JSON.stringify(t.rawName)}`;
    if (o.type === 'boolean' && t.value !== undefined)
      return `${t.rawName} takes no value (got ${JSON.stringify(t.rawName + '=' + t.value)})`;
    if (o.type === 'string') {
      const needs = `${t.rawName} needs ${'needs' in o && o.needs ? o.needs : 'a value'}`;
      if (t.value === undefined) return needs;
      // The strict parse refuses a value that looks like a flag (`--host --json`): most likely the value is missing.
      if (!t.inlineValue && t.value.startsWith('-'))
        return `${needs} (got ${JSON.stringify(t.value)}; write ${t.rawName}=${t.value} if that is the value)`;
    }
  }
  return err.message;
}

/** The declarations as parseArgs takes them, with --help/-h. */
function parseArgsOptions(specs: OptionSpecs): Record<string, OptionSpec> {
  return Object.fromEntries(
    Object.entries({ ...specs, help: HELP }).map(([k, o]) => [
      k,
      { type: o.type, ...(o.short ? { short: o.short } : {}), ...(o.multiple ? { multiple: true } : {}) },
    ]),
  );
}

/** `pd-console NAME: why` over the command's usage, for stderr. */
export function usageText(spec: { name: string; usage: string }, why: string): string {
  return `pd-console ${spec.name}: ${why}\n${spec.usage.endsWith('\n') ? spec.usage : `${spec.usage}\n`}`;
}
