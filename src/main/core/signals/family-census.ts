// A scrape's family census (src/shared/signals/family-classes.ts) with what the console reads, computed once
// per target and family-name set: an endpoint serves the same families scrape after scrape, so the usual cost
// is one joined key per scrape and a string compare.
import { familyCensus, type FamilyCensus } from '@shared/signals/family-classes';
import type { Exposition } from '../probes/exposition/types';
import { isSignalInput } from './evaluate';

// Prometheus text names a counter family with its _total and a histogram without its _bucket/_sum/_count;
// OpenMetrics names counters without _total. The console's inputs are sample names.
const SAMPLE_SUFFIXES = ['', '_total', '_bucket', '_sum', '_count', '_created'];

/** The console reads something from the family (a signal, KV or health source). */
export function familyIsUsed(name: string): boolean {
  return SAMPLE_SUFFIXES.some((s) => isSignalInput(name + s));
}

export function censusOf(exp: Exposition): FamilyCensus {
  return familyCensus(
    exp.families.map((f) => f.name),
    familyIsUsed,
  );
}

export class FamilyCensusCache {
  private readonly byTarget = new Map<string, { key: string; census: FamilyCensus }>();

  /** The census of `exp`, the cached one when `target` served the same family names last time. */
  census(target: string, exp: Exposition): FamilyCensus {
    const key = exp.families.map((f) => f.name).join('\n');
    const hit = this.byTarget.get(target);
    if (hit?.key === key) return hit.census;
    const census = censusOf(exp);
    this.byTarget.set(target, { key, census });
    return census;
  }

  /** Forgets every target whose name starts with `prefix` (a closed deployment's). */
  drop(prefix: string): void {
    for (const k of [...this.byTarget.keys()]) if (k.startsWith(prefix)) this.byTarget.delete(k);
  }
}
