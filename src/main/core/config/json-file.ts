// The app's own JSON files (hosts.json, settings.json): read with a size cap on a regular file only
// (bounded-read.ts), located errors (path:line:column) for text that does not parse or validate, and atomic writes (temp file, fsync, rename, mode 0600) so a crash
// leaves either the old file or the new one, never half of one.
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { z } from 'zod';
import { ApiError } from '../api-error';
import { BoundedReadError, readBoundedFile, readBoundedFileSync } from './bounded-read';
import { findSyntaxError, locatePath, positionAt } from './json-location';

export class ConfigFileError extends ApiError {
  constructor(
    code: string,
    message: string,
    hint: string | undefined,
    readonly file: string,
    readonly line?: number,
    readonly column?: number,
  ) {
    super(code, message, hint);
    this.name = 'ConfigFileError';
  }
}

/** Builds the error a store throws; each store keeps its own subclass so callers can tell the files apart. */
export type ErrorFactory = (
  code: string,
  message: string,
  hint: string | undefined,
  line?: number,
  column?: number,
) => ConfigFileError;

export interface JsonText {
  text: string;
  json: unknown;
}

export interface ReadOptions {
  /** "hosts file", "settings file": how messages name it. */
  what: string;
  maxBytes: number;
  /** What to do about a file that does not parse (the store's own promise about not overwriting it). */
  fixHint: string;
  error: ErrorFactory;
}

/** The file's text and parsed JSON, or null when it does not exist. */
export async function readJsonFile(file: string, o: ReadOptions): Promise<JsonText | null> {
  const text = await readTextFile(file, o);
  return text === null ? null : parseJsonText(file, text, o);
}

/** The file's text under the same rules (a regular file, at most o.maxBytes), or null when it does not exist. */
export async function readTextFile(file: string, o: ReadOptions): Promise<string | null> {
  try {
    return (await readBoundedFile(file, o.maxBytes)).toString('utf8');
  } catch (err) {
    return readFailed(file, err, o);
  }
}

/** Same as readJsonFile, for the one read a shell does before anything else runs (startup). */
export function readJsonFileSync(file: string, o: ReadOptions): JsonText | null {
  let text: string;
  try {
    text = readBoundedFileSync(file, o.maxBytes).toString('utf8');
  } catch (err) {
    return readFailed(file, err, o);
  }
  return parseJsonText(file, text, o);
}

export function parseJsonText(file: string, text: string, o: ReadOptions): JsonText {
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  try {
    return { text, json: JSON.parse(text) };
  } catch (err) {
    const found = findSyntaxError(text);
    const pos = positionAt(text, found?.offset ?? 0);
    throw o.error(
      'config',
      `${file}:${pos.line}:${pos.column}: not valid JSON (${found?.message ?? (err as Error).message})`,
      o.fixHint,
      pos.line,
      pos.column,
    );
  }
}

/** Validates parsed JSON; the first issue is reported at its line:column in the text. */
export function validateJson<S extends z.ZodType>(
  file: string,
  src: JsonText,
  schema: S,
  hint: string,
  error: ErrorFactory,
): z.infer<S> {
  const r = schema.safeParse(src.json);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const pos = locatePath(src.text, issue.path);
  const where = issue.path.length ? `${formatJsonPath(issue.path)}: ` : '';
  throw error(
    'config',
    `${file}:${pos.line}:${pos.column}: ${where}${issue.message}`,
    hint,
    pos.line,
    pos.column,
  );
}

/** Writes `body` to `file` atomically with mode 0600 in a folder of mode 0700 (created if missing). */
export async function writeFileAtomic(file: string, body: string): Promise<void> {
  const dir = path.dirname(file);
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const fh = await fs.open(tmp, 'w', 0o600);
  try {
    await fh.writeFile(body, 'utf8');
    await fh.sync();
  } catch (err) {
    await fh.close();
    await fs.rm(tmp, { force: true });
    throw err;
  }
  await fh.close();
  try {
    await fs.rename(tmp, file);
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw err;
  }
  if (process.platform !== 'win32') {
    // Make the rename itself durable: without this a crash can bring back the old file.
    const d = await fs.open(dir, 'r');
    try {
      await d.sync();
    } finally {
      await d.close();
    }
  }
}

export function formatJsonPath(p: ReadonlyArray<PropertyKey>): string {
  return p.map((k, i) => (typeof k === 'number' ? `[${k}]` : i === 0 ? String(k) : `.${String(k)}`)).join('');
}

function readFailed(file: string, err: unknown, o: ReadOptions): null {
  if (err instanceof BoundedReadError)
    throw o.error(
      'config',
      `${err.message}; a ${o.what} is a regular file of at most ${o.maxBytes} bytes, so it is refused`,
      `Check that the path points at the PD Console ${o.what}.`,
    );
  if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
  throw o.error(
    'config',
    `cannot read ${o.what} ${file}: ${(err as Error).message}`,
    'Fix the file permissions; PD Console will not replace a file it cannot read.',
  );
}
