// A worker's URL as the router names it, normalised so the metrics, /workers and the unit files agree on it.
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

function normalize(url: string): string {
  let u = url.trim();
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(u)) u = `http://${u}`;
  const m = /^([a-z][a-z0-9+.-]*:\/\/)([^/]*)(.*)$/i.exec(u);
  if (!m) return u;
  return `${m[1].toLowerCase()}${m[2].toLowerCase()}${m[3]}`.replace(/\/+$/, '');
}
