// The settings file (settings.json beside hosts.json): one versioned JSON document validated with zod. A file
// that does not parse, does not validate or comes from a newer PD Console is reported with path:line:column and
// is never reset or overwritten: every save reads the file again first and refuses while it is unusable. Older
// formats are migrated (settings-migrations.ts) and rewritten in the current one on the next save, after the old
// file is kept beside it. Writes are atomic, mode 0600, and serialized.
import { promises as fs } from 'node:fs';
import { SETTINGS_MAX_BYTES, type Settings } from '@shared/api/settings';
import { settingsFileSchema } from '@shared/schemas/settings';
import {
  ConfigFileError,
  parseJsonText,
  readJsonFile,
  readJsonFileSync,
  readTextFile,
  validateJson,
  writeFileAtomic,
  type ErrorFactory,
  type JsonText,
  type ReadOptions,
} from './json-file';
import { locatePath } from './json-location';
import { SETTINGS_FILE_VERSION, migrate, versionOf } from './settings-migrations';
import { withDefaults } from './settings-defaults';

export { SETTINGS_FILE_VERSION } from './settings-migrations';

/** The promise made about a file PD Console cannot use; the UI and the CLI show it as the hint. */
export const UNUSABLE_HINT =
  'PD Console runs on default settings and will not save over this file until you fix it or move it away; ' +
  'then choose "Reload settings file" (or restart PD Console).';

export class SettingsStoreError extends ConfigFileError {
  override name = 'SettingsStoreError';
}

export interface ParsedSettings {
  settings: Settings;
  /** Set when the text was in an older format. */
  migratedFrom?: number;
  /** The sections the text sets (the others are defaults). */
  present: Array<Exclude<keyof Settings, 'version'>>;
}

export type SettingsLoad =
  ({ ok: true; exists: boolean } & ParsedSettings) | { ok: false; error: SettingsStoreError };

/**
 * The text of a file to import (`pd-console settings import FILE`), read under the settings file's own rules: a
 * regular file of at most SETTINGS_MAX_BYTES, judged before a byte is read. The text is judged by `parse`.
 */
export async function readSettingsImport(file: string): Promise<string> {
  const error: ErrorFactory = (code, message, hint, line, column) =>
    new SettingsStoreError(code, message, hint, file, line, column);
  const text = await readTextFile(file, {
    what: 'settings file',
    maxBytes: SETTINGS_MAX_BYTES,
    fixHint: 'Nothing was changed.',
    error,
  });
  if (text === null) throw error('config', `${file}: no such file`, 'Check the path of the file to import.');
  return text;
}

export class SettingsStore {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(readonly file: string) {}

  /** The settings in the file (the defaults when there is none); for the shells' startup. */
  loadSync(): SettingsLoad {
    return this.loaded(() => readJsonFileSync(this.file, this.readOptions(this.file)));
  }

  load(): Promise<SettingsLoad> {
    return this.serialized(async () => {
      let src: JsonText | null;
      try {
        src = await readJsonFile(this.file, this.readOptions(this.file));
      } catch (err) {
        return { ok: false as const, error: err as SettingsStoreError };
      }
      return this.loaded(() => src);
    });
  }

  /** Judges text as a settings file exactly as the file itself is judged; `source` names it in messages. */
  parse(text: string, source: string): ParsedSettings {
    const o = this.readOptions(source);
    return this.judge(source, parseJsonText(source, text, o));
  }

  /**
   * Replaces the file. Refused (SettingsStoreError) while the file on disk is unusable. `backup` keeps the
   * current file as settings.json.bak first; a file in an older format is kept as settings.json.v<N>.bak.
   */
  save(settings: Settings, opts: { backup?: boolean } = {}): Promise<{ backup?: string }> {
    return this.serialized(async () => {
      const o = this.readOptions(this.file);
      const src = await readJsonFile(this.file, o).catch((err: unknown) => {
        throw this.refusal(err as SettingsStoreError);
      });
      let backup: string | undefined;
      if (src) {
        let parsed: ParsedSettings;
        try {
          parsed = this.judge(this.file, src);
        } catch (err) {
          throw this.refusal(err as SettingsStoreError);
        }
        if (parsed.migratedFrom !== undefined) {
          const old = `${this.file}.v${parsed.migratedFrom}.bak`;
          if (!(await exists(old))) await writeFileAtomic(old, src.text);
        }
        if (opts.backup) {
          backup = `${this.file}.bak`;
          await writeFileAtomic(backup, src.text);
        }
      }
      await writeFileAtomic(this.file, serializeSettings(settings));
      return { backup };
    });
  }

  private loaded(read: () => JsonText | null): SettingsLoad {
    try {
      const src = read();
      if (!src) return { ok: true, exists: false, settings: withDefaults({ version: 1 }), present: [] };
      return { ok: true, exists: true, ...this.judge(this.file, src) };
    } catch (err) {
      if (err instanceof SettingsStoreError) return { ok: false, error: err };
      throw err;
    }
  }

  private judge(file: string, src: JsonText): ParsedSettings {
    const error = this.errorFor(file);
    const json = src.json;
    if (typeof json !== 'object' || json === null || Array.isArray(json))
      throw error(
        'config',
        `${file}:1:1: a settings file is one JSON object ({ "version": 1, … })`,
        UNUSABLE_HINT,
        1,
        1,
      );
    const doc = json as Record<string, unknown>;
    const version = versionOf(doc);
    if (version === null) {
      const pos = locatePath(src.text, ['version']);
      throw error(
        'config',
        `${file}:${pos.line}:${pos.column}: version must be a whole number (this PD Console writes ${SETTINGS_FILE_VERSION})`,
        UNUSABLE_HINT,
        pos.line,
        pos.column,
      );
    }
    if (version > SETTINGS_FILE_VERSION) {
      const pos = locatePath(src.text, ['version']);
      throw error(
        'config-newer',
        `${file}:${pos.line}:${pos.column}: written by a newer PD Console (settings format version ${version}; this one reads up to ${SETTINGS_FILE_VERSION})`,
        `Update PD Console. ${UNUSABLE_HINT}`,
        pos.line,
        pos.column,
      );
    }
    let current = doc;
    if (version < SETTINGS_FILE_VERSION) {
      try {
        current = migrate(doc, version);
      } catch (err) {
        throw error(
          'config',
          `${file}:1:1: cannot bring settings format version ${version} up to ${SETTINGS_FILE_VERSION}: ${(err as Error).message.split('\n')[0]}`,
          UNUSABLE_HINT,
          1,
          1,
        );
      }
    }
    const valid = validateJson(
      file,
      { text: src.text, json: current },
      settingsFileSchema,
      UNUSABLE_HINT,
      error,
    );
    const present = (Object.keys(valid) as Array<keyof typeof valid>).filter((k) => k !== 'version');
    const out: ParsedSettings = { settings: withDefaults(valid), present };
    if (version < SETTINGS_FILE_VERSION) out.migratedFrom = version;
    return out;
  }

  private refusal(err: SettingsStoreError): SettingsStoreError {
    return new SettingsStoreError(
      'settings-not-saved',
      `not saved: ${err.message}`,
      err.hint ?? UNUSABLE_HINT,
      err.file,
      err.line,
      err.column,
    );
  }

  private readOptions(file: string): ReadOptions {
    return {
      what: 'settings file',
      maxBytes: SETTINGS_MAX_BYTES,
      fixHint: UNUSABLE_HINT,
      error: this.errorFor(file),
    };
  }

  private errorFor(file: string): ErrorFactory {
    return (code, message, hint, line, column) =>
      new SettingsStoreError(code, message, hint, file, line, column);
  }

  private serialized<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }
}

export function serializeSettings(settings: Settings): string {
  return JSON.stringify({ ...settings, version: SETTINGS_FILE_VERSION }, null, 2) + '\n';
}

async function exists(file: string): Promise<boolean> {
  return fs.access(file).then(
    () => true,
    () => false,
  );
}
