// Lines that say something went wrong, by what SGLang, Python, CUDA, the kernel and the router print — not only
// by journald priority: SGLang logs a scheduler crash's traceback at info level, so "err and worse" finds nothing.
// One list for the journal view's "problems" filter and for the last error a failing unit's card shows.

const PROBLEM =
  /Traceback \(most recent call last\)|^\s*\w+(?:\.\w+)*(?:Error|Exception|Interrupt|Exit)\b(?::|$)|CUDA error|CUDA out of memory|out of memory|OutOfMemory|\bOOM\b|oom-kill|\bKilled\b|Segmentation fault|core dumped|\bFATAL\b|\bpanicked at\b|^\S+\s+ERROR\s|\bERROR\b[:\]]|Scheduler hit an exception|is dead\b|Received sigquit/i;

/** Does the line report a failure (whatever its journald priority)? */
export function isProblemLine(text: string, priority?: number): boolean {
  return (priority !== undefined && priority <= 3) || PROBLEM.test(text);
}

/**
 * Which line of a failure says what failed: a traceback's final "SomeError: message" line, else a CUDA/OOM line,
 * else any problem line. Lower is better; null when the line is not one.
 */
export function problemRank(text: string, priority?: number): number | null {
  if (/^\s*\w+(?:\.\w+)*(?:Error|Exception|Interrupt)\b:/.test(text)) return 0;
  if (
    /CUDA error|out of memory|OutOfMemory|\bOOM\b|oom-kill|Segmentation fault|\bKilled\b|panicked at/i.test(
      text,
    )
  )
    return 1;
  if (/Traceback \(most recent call last\)|Scheduler hit an exception|Received sigquit/i.test(text)) return 3;
  return isProblemLine(text, priority) ? 2 : null;
}
