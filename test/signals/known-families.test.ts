// The shipped list of known families (src/shared/signals/known-families.ts) holds to the upstream inventory
// (../shared/reference/upstream/*.tsv, read here at test time): the same names, and per era exactly the
// families test/demo/inventory.ts gives that era. A name in one but not the other fails, so the list that
// decides "not understood by this PD Console version" stays true when the inventory grows.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  KNOWN_FAMILIES,
  KNOWN_FAMILY_PREFIXES,
  knownFamily,
  type KnownEra,
} from '../../src/shared/signals/known-families';
import { DEMO_ERAS, ROUTER_ERAS } from '../../src/main/demo/eras';
import { inventoryAvailable, inventoryOf, SKIP_MESSAGE, UPSTREAM } from '../demo/inventory';

if (!inventoryAvailable) console.warn(SKIP_MESSAGE);

/** Every family-name row of a TSV (comment lines are notes, not rows). */
function tsvNames(file: string): string[] {
  return readFileSync(resolve(UPSTREAM, file), 'utf8')
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith('#'))
    .map((l) => l.split('\t')[0]);
}

/** The shipped list as the TSVs write it: exact names, and a group prefix as `prefix*`. */
function shippedNames(kind: 'server' | 'router'): string[] {
  return [
    ...[...KNOWN_FAMILIES.values()].filter((f) => f.kind === kind).map((f) => f.name),
    ...KNOWN_FAMILY_PREFIXES.filter((f) => f.kind === kind).map((f) => `${f.name}*`),
  ].sort();
}

const sorted = (xs: Iterable<string>): string[] => [...new Set(xs)].sort();

describe.skipIf(!inventoryAvailable)('the shipped known-family list against the upstream inventory', () => {
  it('server: the same family names as sglang-real-metrics.tsv', () => {
    expect(shippedNames('server')).toEqual(sorted(tsvNames('sglang-real-metrics.tsv')));
  });

  it('router: the same family names as router-real-metrics.tsv (every release section and HEAD)', () => {
    expect(shippedNames('router')).toEqual(sorted(tsvNames('router-real-metrics.tsv')));
  });

  it.each([...DEMO_ERAS, ...ROUTER_ERAS])('era %s: exactly the families the inventory gives it', (era) => {
    const shipped = [...KNOWN_FAMILIES.values(), ...KNOWN_FAMILY_PREFIXES]
      .filter((f) => f.eras.includes(era as KnownEra))
      .map((f) => (KNOWN_FAMILY_PREFIXES.includes(f) ? `${f.name}*` : f.name));
    expect(sorted(shipped)).toEqual(sorted(inventoryOf(era).keys()));
  });

  it('a family no supported era emits says where upstream has it, and only such a family does', () => {
    for (const f of KNOWN_FAMILIES.values())
      expect(f.eras.length === 0, f.name).toBe(f.outside !== undefined);
    // The TSV marks these regular-router only or never recorded: known, but no PD router's metric.
    expect(knownFamily('sgl_router_requests_total')?.outside).toMatch(/regular \(non-PD\) router only/);
  });

  it('the check can fail: a name the TSVs lack is not known', () => {
    const all = new Set([...tsvNames('sglang-real-metrics.tsv'), ...tsvNames('router-real-metrics.tsv')]);
    // The hypothetical future families the classification fixture uses are in no TSV.
    for (const n of [
      'sglang:spec_decode_accept_length',
      'sglang:kv_offload_bytes_total',
      'smg_worker_kv_pressure',
    ]) {
      expect(all.has(n), n).toBe(false);
      expect(knownFamily(n), n).toBeNull();
    }
    expect(knownFamily('sglang:encoder_queue_reqs')?.eras).toEqual(['E1', 'E2', 'E3', 'E4']);
  });
});
