// OpenSSH pattern matching (ssh_config(5) PATTERNS), shared by `Host`/`Match` lines and known_hosts host fields.
// Hand-written instead of a RegExp per pattern: patterns come from files we do not control, and a regex built
// from `*a*a*a*` can backtrack for a long time; this matcher is linear in practice and never throws.

/** `*` matches any run of characters, `?` exactly one; everything else literally (case-insensitively by default). */
export function wildcardMatch(text: string, pattern: string, foldCase = true): boolean {
  const s = foldCase ? text.toLowerCase() : text;
  const p = foldCase ? pattern.toLowerCase() : pattern;
  let si = 0;
  let pi = 0;
  let starPi = -1;
  let starSi = 0;
  while (si < s.length) {
    if (pi < p.length && (p[pi] === '?' || p[pi] === s[si])) {
      si++;
      pi++;
    } else if (pi < p.length && p[pi] === '*') {
      starPi = pi++;
      starSi = si;
    } else if (starPi >= 0) {
      pi = starPi + 1;
      si = ++starSi;
    } else return false;
  }
  while (pi < p.length && p[pi] === '*') pi++;
  return pi === p.length;
}

/**
 * A pattern list: matches when some positive pattern matches and no negated (`!`) pattern does.
 * A negated match wins regardless of order, as in OpenSSH's match_pattern_list().
 */
export function patternListMatch(text: string, patterns: readonly string[], foldCase = true): boolean {
  let matched = false;
  for (const raw of patterns) {
    if (raw.startsWith('!')) {
      if (wildcardMatch(text, raw.slice(1), foldCase)) return false;
    } else if (wildcardMatch(text, raw, foldCase)) matched = true;
  }
  return matched;
}

/** A comma-separated pattern list (known_hosts host field, `Match host a,b`). */
export function commaListMatch(text: string, list: string): boolean {
  return patternListMatch(
    text,
    list.split(',').filter((p) => p.length > 0),
  );
}
