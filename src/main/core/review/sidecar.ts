// A session's sidecar (<id>.meta.json, docs/recording-format.md §7) as review mode reads it: the name given
// later and the notes pinned later. Read-only here; the session store owns writing it.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';

const sidecarSchema = z.object({
  name: z.string().optional(),
  annotations: z
    .array(z.object({ id: z.string(), ts: z.number(), text: z.string() }))
    .optional()
    .default([]),
});

export interface Sidecar {
  name?: string;
  annotations: { id: string; ts: number; text: string }[];
  /** Why the sidecar could not be used (it exists but is unreadable or invalid). */
  warning: string | null;
}

export async function readSidecar(dir: string, sessionId: string): Promise<Sidecar> {
  const path = join(dir, `${sessionId}.meta.json`);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { annotations: [], warning: null };
    return {
      annotations: [],
      warning: `Cannot read ${path}: ${(err as Error).message}; later renames and notes are not shown.`,
    };
  }
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    // An invalid file is reported below like any other invalid sidecar.
  }
  const parsed = sidecarSchema.safeParse(json);
  if (!parsed.success)
    return {
      annotations: [],
      warning: `${path} is not a valid session sidecar; later renames and notes are not shown.`,
    };
  return { name: parsed.data.name, annotations: parsed.data.annotations, warning: null };
}
