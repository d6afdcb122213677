// The verdict's supporting lines as the verdict box lists them. A stuck or down pipeline's headline already
// quotes its leading figure ("Decode-bound: … — 57 requests waiting for KV slots on decode, all on decode-1"),
// and listing that line again under it read as the box stuttering; the verdict itself keeps every line, as the
// review and the exports read it.
import type { Verdict } from '@shared/contract';

export function evidenceBeyondHeadline(verdict: Pick<Verdict, 'headline' | 'evidence'>): string[] {
  return verdict.evidence.filter((line) => !verdict.headline.includes(line));
}
