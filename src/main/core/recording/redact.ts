// Removes secrets from text that leaves the operator's machine (incident bundles): API keys and tokens in
// command lines and environment assignments, passwords, Authorization headers, credentials in URLs, private key
// blocks, and well-known token shapes wherever they appear. Errs on the side of removing too much: a redacted
// harmless value costs nothing, a leaked token costs a rotation.

export const REDACTED = '[REDACTED]';

interface Rule {
  name: string;
  re: RegExp;
  replace: (match: string, ...groups: string[]) => string;
}

// Secret-ish words for flag names (--api-key) and key=value keys (password=…). A word must END the flag or key, so
// --tokenizer-path and --max-total-tokens are left alone.
const FLAG_WORDS = String.raw`(?:api[-_]?key|token|secret|password|passwd|passphrase|credentials?|private[-_]?key|access[-_]?key|auth)`;
const KEY_WORDS = String.raw`(?:password|passwd|passphrase|secret|token|api[-_]?key|apikey|access[-_]?key(?:[-_]?id)?|secret[-_]?key|account[-_]?key|private[-_]?key|client[-_]?secret|auth[-_]?token|credentials?|signature|sig)`;
// Parts of UPPER_SNAKE environment names that mark the value as secret (HF_TOKEN, OPENAI_API_KEY, DB_PASSWORD…);
// whole parts only, so TOKENIZERS_PARALLELISM is not one.
const ENV_PARTS = String.raw`(?:TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|KEY|APIKEY|CREDENTIALS?|AUTH)`;
// A value: quoted, or up to whitespace/quote/separator.
const VALUE = String.raw`("[^"\n]*"|'[^'\n]*'|[^\s"',;&]+)`;
// Values that say "no secret here" and stay readable: Python's None/True/False (SGLang prints
// `api_key=None` in every ServerArgs line), JSON null/true/false, empty quotes, plain numbers, and the start of a
// list, dict or call (`bucket_time_to_first_token=[0.1, …]`), which a secret never is.
const NOT_A_SECRET = String.raw`(?!(?:None|null|True|False|true|false)\b|''|""|-?\d+(?:\.\d+)?(?:[\s,;"')}\]]|$)|[[{(])`;
const NOT_DONE = String.raw`(?!\[REDACTED\])`;

const RULES: Rule[] = [
  {
    // A private key block; one cut off before its END line is removed to the end of the text.
    name: 'private key block',
    re: /-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----[\s\S]*?(?:-----END \1-----|$(?![\s\S]))/g,
    replace: (_m, kind) => `-----BEGIN ${kind}-----\n${REDACTED}\n-----END ${kind}-----`,
  },
  {
    name: 'authorization header',
    re: new RegExp(
      String.raw`\b((?:proxy-)?authorization)("?\s*[:=]\s*"?)(?:(bearer|basic|digest|token|negotiate|apikey)\s+)?${NOT_DONE}([^\s"',;]+)`,
      'gi',
    ),
    replace: (_m, h, sep, scheme) => `${h}${sep}${scheme ? scheme + ' ' : ''}${REDACTED}`,
  },
  {
    name: 'bearer token',
    re: new RegExp(String.raw`\b(bearer)\s+${NOT_DONE}([A-Za-z0-9\-._~+/]{8,}=*)`, 'gi'),
    replace: (_m, b) => `${b} ${REDACTED}`,
  },
  {
    name: 'url credentials',
    re: /\b([a-z][a-z0-9+.-]*:\/\/)([^\s:@/'"]*):(?!\[REDACTED\]@)([^\s@/'"]+)@/gi,
    replace: (_m, scheme, user) => `${scheme}${user}:${REDACTED}@`,
  },
  {
    name: 'secret command-line flag',
    re: new RegExp(String.raw`(--?[A-Za-z0-9_-]*${FLAG_WORDS})(=|\s+)${NOT_DONE}${VALUE}`, 'gi'),
    replace: (_m, flag, sep) => `${flag}${sep}${REDACTED}`,
  },
  {
    name: 'secret environment variable',
    re: new RegExp(String.raw`\b((?:[A-Z0-9]+_)*${ENV_PARTS}(?:_[A-Z0-9]+)*)=${NOT_DONE}${VALUE}`, 'g'),
    replace: (_m, name) => `${name}=${REDACTED}`,
  },
  {
    // Python repr and dict forms, as SGLang logs its whole configuration at start-up:
    // `server_args=ServerArgs(…, api_key='sk-…', admin_api_key='…', ssl_keyfile_password='…', …)` and
    // `{'api_key': '…'}`. A quoted value is removed whole, spaces included; None and numbers stay.
    name: 'secret quoted key/value',
    re: new RegExp(
      String.raw`\b((?:[A-Za-z0-9]+[_-])*${KEY_WORDS}['"]?\s*[:=]\s*)${NOT_DONE}${NOT_A_SECRET}('(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")`,
      'gi',
    ),
    replace: (m, key, value) => `${key}${value[0]}${REDACTED}${value[0]}`,
  },
  {
    // password=…, "api_key": "…", token: … — but not "#token: 236544" (SGLang batch logs) or "token usage: 0.53".
    name: 'secret key/value',
    re: new RegExp(
      String.raw`\b((?:[A-Za-z0-9]+[_-])*${KEY_WORDS}['"]?\s*[:=]\s*['"]?)${NOT_DONE}${NOT_A_SECRET}([^\s"',;&}\])]+)`,
      'gi',
    ),
    replace: (_m, key) => `${key}${REDACTED}`,
  },
  // Well-known token shapes, wherever they appear.
  {
    name: 'openai-style key',
    re: /\bsk-(?:proj-|live-|test-|ant-)?[A-Za-z0-9_-]{16,}/g,
    replace: () => REDACTED,
  },
  { name: 'hugging face token', re: /\bhf_[A-Za-z0-9]{20,}/g, replace: () => REDACTED },
  {
    name: 'github token',
    re: /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})/g,
    replace: () => REDACTED,
  },
  { name: 'slack token', re: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g, replace: () => REDACTED },
  { name: 'aws access key id', re: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, replace: () => REDACTED },
  { name: 'google api key', re: /\bAIza[0-9A-Za-z_-]{35}/g, replace: () => REDACTED },
  {
    name: 'jwt',
    re: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
    replace: () => REDACTED,
  },
];

/** Redacted text and how many secrets were removed. */
export function redactSecretsCounted(text: string): { text: string; count: number } {
  let count = 0;
  let out = text;
  for (const rule of RULES) {
    out = out.replace(rule.re, (...args: unknown[]) => {
      count++;
      const groups = args.slice(1, -2).map((g) => (typeof g === 'string' ? g : ''));
      return rule.replace(String(args[0]), ...groups);
    });
  }
  return { text: out, count };
}

/** The text with tokens, passwords, keys and private key blocks replaced by [REDACTED]. */
export function redactSecrets(text: string): string {
  return redactSecretsCounted(text).text;
}

/** Deep copy of JSON data with every string redacted; `count` accumulates the number of secrets removed. */
export function redactJson<T>(value: T, counter: { count: number }): T {
  if (typeof value === 'string') {
    const r = redactSecretsCounted(value);
    counter.count += r.count;
    return r.text as T;
  }
  if (Array.isArray(value)) return value.map((v: unknown) => redactJson(v, counter)) as T;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = redactJson(v, counter);
    return out as T;
  }
  return value;
}

/**
 * Line-by-line redaction for a stream of journal lines from one unit: a private key printed over several lines
 * has its body removed up to the END line, which a per-line regex cannot see.
 */
export class LineRedactor {
  private inKey = new Map<string, boolean>();
  count = 0;

  line(stream: string, text: string): string {
    if (this.inKey.get(stream)) {
      this.count++;
      if (/-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----/.test(text)) this.inKey.set(stream, false);
      return REDACTED;
    }
    const r = redactSecretsCounted(text);
    this.count += r.count;
    if (
      /-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----/.test(text) &&
      !/-----END [A-Z0-9 ]*PRIVATE KEY/.test(text)
    )
      this.inKey.set(stream, true);
    return r.text;
  }
}
