// Older settings formats, brought up to the current one step by step. Bumping the format is one function here:
// MIGRATIONS[n] turns a version-n document into a version-(n+1) one, and the current schema judges the result.
import { z } from 'zod';

export const SETTINGS_FILE_VERSION = 1;

/**
 * Version 0: the settings as the services held them in memory before there was a file — DashboardService's
 * `rules`, RestartService's `settings` (with the run's readOnlyLocked), RecordingService's `settings` and the
 * renderer's stored theme. It has no `version` key.
 */
const v0Schema = z.looseObject({
  version: z.literal(0).optional(),
  alertRules: z.array(z.unknown()).optional(),
  restartSettings: z.looseObject({}).optional(),
  recordingSettings: z.looseObject({}).optional(),
  theme: z.unknown().optional(),
});

type Migration = (doc: Record<string, unknown>) => Record<string, unknown>;

const MIGRATIONS: Record<number, Migration> = {
  0: (doc) => {
    const v0 = v0Schema.parse(doc);
    const { readOnlyLocked: _runOnly, ...restart } = v0.restartSettings ?? {};
    const out: Record<string, unknown> = { version: 1 };
    if (v0.alertRules) out.alerts = { rules: v0.alertRules };
    if (v0.restartSettings) out.restart = restart;
    if (v0.recordingSettings) out.recording = v0.recordingSettings;
    if (v0.theme !== undefined) out.ui = { theme: v0.theme };
    return out;
  },
};

/** The document's format version; a document without one is version 0 (the in-memory shape above). */
export function versionOf(doc: Record<string, unknown>): number | null {
  if (!('version' in doc)) return 0;
  const v = doc.version;
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : null;
}

/** Brings a document of an older version up to SETTINGS_FILE_VERSION. */
export function migrate(doc: Record<string, unknown>, from: number): Record<string, unknown> {
  let cur = doc;
  for (let v = from; v < SETTINGS_FILE_VERSION; v++) {
    const step = MIGRATIONS[v];
    if (!step) throw new Error(`no migration from settings format version ${v}`);
    cur = step(cur);
  }
  return cur;
}
