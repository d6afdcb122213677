// A worker's URL as the router names it, normalised so the metrics, /workers and the unit files agree on it.
import { normalizeWorkerUrl as normalize } from '@shared/worker-url';
import { detach } from '../exposition/series-cache';

/**
 * The router's per-worker gauges name the same few URLs every scrape: each is normalised once. Bounded, since
 * a label is whatever the router serves; when full it starts over rather than tracking what is least used.
 */
const normalized = new Map<string, string>();
const MAX_REMEMBERED = 1024;

/** Lower-case scheme and host, `http://` when no scheme is given, no trailing slash. */
export function normalizeWorkerUrl(url: string): string {
  let out = normalized.get(url);
  if (out !== undefined) return out;
  out = normalize(url);
  if (normalized.size >= MAX_REMEMBERED) normalized.clear();
  // A label value may be a slice of the whole scrape's text: kept as a key, it must not keep that text alive.
  normalized.set(detach(url), detach(out));
  return out;
}
