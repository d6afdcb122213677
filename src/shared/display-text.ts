// Text that came from a host, a server, a file or a label, made safe to show in a terminal or a plain-text file:
// a control character in it (an escape sequence sets the window title or clears the screen, a carriage return
// overwrites the line, a newline forges a line of output, a bidi override reverses what is read) is shown as an
// escape instead of acting, and the userinfo of a URL (http://user:password@host) is not shown at all.
// The escapes are JSON's own (\n, \t, \r, \u001b), so text already serialised as JSON stays valid JSON.

/**
 * C0 controls, DEL, C1 controls, and the format characters that reorder or break text: the Arabic letter mark,
 * LRM/RLM, the bidi embeddings and overrides (U+202A–E) and isolates (U+2066–9), and the line and paragraph
 * separators.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is this file's purpose
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;
/** The same without tab and newline, which a caller's own layout uses. */
const UNSAFE_IN_LAYOUT =
  // eslint-disable-next-line no-control-regex -- as above
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;

const SHORT: Record<string, string> = { '\n': '\\n', '\t': '\\t', '\r': '\\r' };

function escapeOf(c: string): string {
  return SHORT[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** What ends a URL's authority: the path, query or fragment, whitespace, a quote (a JSON string ends), a bracket. */
const AUTHORITY_END = /[\s/?#"'<>\\`]/g;
const SCHEME_CHAR = /[A-Za-z0-9+.-]/;

/**
 * `http://admin:pw@10.0.0.2:30000` → `http://***@10.0.0.2:30000`, for every URL in `text`: the userinfo is
 * everything up to the last `@` of the authority (a password may hold an unescaped `@`). One pass over the text,
 * whatever it holds: each authority is read once.
 */
export function redactUserinfo(text: string): string {
  let out = '';
  let copied = 0;
  for (let i = text.indexOf('://'); i !== -1; i = text.indexOf('://', i + 3)) {
    if (i === 0 || !SCHEME_CHAR.test(text[i - 1])) continue;
    AUTHORITY_END.lastIndex = i + 3;
    const end = AUTHORITY_END.exec(text)?.index ?? text.length;
    const at = text.slice(i + 3, end).lastIndexOf('@');
    if (at !== -1) {
      out += `${text.slice(copied, i + 3)}***`;
      copied = i + 3 + at;
    }
    i = end - 3;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/** One line: every control and reordering character shown as an escape, newlines and tabs included. */
export function oneLine(text: string): string {
  return redactUserinfo(text).replace(UNSAFE, escapeOf);
}

/**
 * For a whole block of output whose newlines and tabs are the writer's own layout: every other control and
 * reordering character shown as an escape. Text from elsewhere inside the block should have gone through
 * `oneLine` first, or its newlines pass as layout.
 */
export function visibleLayout(text: string): string {
  return redactUserinfo(text).replace(UNSAFE_IN_LAYOUT, escapeOf);
}

/** True when `text` holds no control or reordering character (e.g. a label that must be one plain line). */
export function isPlainLine(text: string): boolean {
  return text.search(UNSAFE) === -1;
}

/** The refusal message for a name or label that is not one plain line. */
export const PLAIN_LINE_MESSAGE =
  'must be one line of plain text: no line breaks, tabs, escape sequences or other control characters';
