// The runtime side of `SignalKey`: what a key received over a transport must look like. The compiler checks
// the renderer's own keys; this checks a user script's or an old window's, so a misspelt key is refused with
// its name instead of answering an empty chart.
import { GPU_SIGNALS, ROUTER_SIGNALS, SERVER_SIGNALS, type SignalKey } from './spec';
import { isScope, splitScopedKey, type ScopedKey } from './scoped-key';

const KV_RANK = /^kv_rank\.[A-Za-z0-9_:-]{1,40}\.ratio$/;

export function isSignalKey(key: string): key is SignalKey {
  if (key.length > 120) return false;
  const dot = key.indexOf('.');
  if (dot < 0) return false;
  const group = key.slice(0, dot);
  const rest = key.slice(dot + 1);
  if (group === 'prefill' || group === 'decode')
    return Object.hasOwn(SERVER_SIGNALS, rest) || KV_RANK.test(rest);
  if (group === 'router') return Object.hasOwn(ROUTER_SIGNALS, rest);
  if (group === 'gpu') {
    const m = /^(\d{1,3})\.([a-z_]+)$/.exec(rest);
    return m !== null && Object.hasOwn(GPU_SIGNALS, m[2]);
  }
  return false;
}

/** A signal key with an optional worker or host scope (`decode.kv_ratio@decode-1`, see scoped-key.ts). */
export function isScopedSignalKey(key: string): key is ScopedKey {
  const { key: base, scope } = splitScopedKey(key);
  return isSignalKey(base) && (scope === undefined || isScope(scope));
}
