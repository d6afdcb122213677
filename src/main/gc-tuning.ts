// When V8 starts a major garbage collection in the long-running core (the desktop app's main process, `npm run
// web`, a watching CLI). Set once at start, before anything allocates much; `PD_CONSOLE_GC_TUNING=0` leaves
// V8's own choice (for comparing, and as an escape hatch).
//
// Why: the core's heap is large and steady (a fleet's series caches, journal backlogs, compiled code: 55–65 MB
// on 32 workers) and it promotes little, so after each major GC V8 sets the next limit only ~24 MB above the
// live size (its growing factor is at the minimum when the collector is fast next to the promotion rate). V8
// then starts incremental marking as soon as the room left below that limit is no more than the young
// generation's capacity (16 MB on a 64-bit Node 20, more on newer V8), and it counts the ArrayBuffers
// allocated since the last major GC (every socket read and scrape body) as used room too. So the core marked
// its whole heap again every 2–4 s: 24–40 major GCs a minute on the 32-worker fleet, 20–35 ms of CPU a second
// on V8's helper threads, all of it finding the same live objects (bench/gc-tuning.ts measures it).
//
// The flags below make V8 start marking by how much of that room is used instead: a task once 75 % of it is
// gone, at once past 90 %. The limit itself, the young generation and every other heuristic stay V8's, so a
// process that really grows (a day-long recording opened for review) is collected as before.
import { setFlagsFromString } from 'node:v8';

/** The V8 flags set; each is read by V8 when it decides, so setting them after start-up takes effect. */
export const GC_TUNING_FLAGS = [
  '--incremental-marking-soft-trigger=75',
  '--incremental-marking-hard-trigger=90',
];

/**
 * Applies GC_TUNING_FLAGS unless `env.PD_CONSOLE_GC_TUNING` is "0". Returns the flags set (none when off or on
 * a V8 older than 11, whose triggers were not measured).
 */
export function tuneGarbageCollector(
  env: NodeJS.ProcessEnv = process.env,
  v8Version: string = process.versions.v8,
  set: (flag: string) => void = setFlagsFromString,
): string[] {
  if (env.PD_CONSOLE_GC_TUNING === '0') return [];
  if (Number(v8Version.split('.')[0]) < 11) return [];
  for (const flag of GC_TUNING_FLAGS) set(flag);
  return [...GC_TUNING_FLAGS];
}
