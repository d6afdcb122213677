// A worker's URL as the router names it, normalised so the router's metrics, its /workers list, the unit files and
// the screens agree on it (no Node or DOM imports: the core caches it per label, the renderer matches with it).

/** Lower-case scheme and host, `http://` when no scheme is given, no trailing slash. */
export function normalizeWorkerUrl(url: string): string {
  let u = url.trim();
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(u)) u = `http://${u}`;
  const m = /^([a-z][a-z0-9+.-]*:\/\/)([^/]*)(.*)$/i.exec(u);
  if (!m) return u;
  return `${m[1].toLowerCase()}${m[2].toLowerCase()}${m[3]}`.replace(/\/+$/, '');
}
