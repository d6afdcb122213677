// A role may run several workers, so a role's signal key alone (`decode.kv_ratio`) does not name one series. A
// scoped key names the worker (or, for GPU keys, the host) after an `@`: `decode.kv_ratio@decode-1`,
// `gpu.3.util@gpu-b`; every deployment's series carry it, a 1P1D host's (`@decode-0`) too. The unscoped key is the
// role's aggregate (KV tokens summed over its workers, the ratio of those sums). The spec is looked up by the
// unscoped part, so every evaluator, alert and chart definition serves every worker unchanged.
import type { SignalKey } from './spec';

/** A worker id (`decode-1`) or host id (`gpu-b`, `ops@10.0.0.5:22`): what may follow the `@`. */
const SCOPE = /^[A-Za-z0-9_.:@-]{1,80}$/;

export type ScopedKey = SignalKey | `${SignalKey}@${string}`;

/** The key of one worker's (or one host's) series. */
export function scopedKey(key: SignalKey, scope: string | undefined): ScopedKey {
  return scope === undefined ? key : `${key}@${scope}`;
}

/** Splits `decode.kv_ratio@decode-1` into the spec key and its scope; an unscoped key has none. */
export function splitScopedKey(key: string): { key: string; scope?: string } {
  const at = key.indexOf('@');
  if (at < 0) return { key };
  return { key: key.slice(0, at), scope: key.slice(at + 1) };
}

/** True when the scope part of a key received over a transport is well formed (the key part is checked apart). */
export function isScope(scope: string): boolean {
  return SCOPE.test(scope);
}
