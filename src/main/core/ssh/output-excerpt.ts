// How a host's answer is quoted in a message when it is not what the command prints: its first characters,
// quoted, with every control character and everything outside printable ASCII made visible as an escape, so a
// terminal escape sequence or a NUL in the answer shows as text instead of acting on the operator's terminal.

/** Characters of an answer quoted in a message. */
export const EXCERPT_CHARS = 80;

/** `"first characters…"` with `\n`, `\t`, `\r`, `\e` and `\uXXXX` for everything else that is not printable ASCII. */
export function outputExcerpt(text: string, max = EXCERPT_CHARS): string {
  if (text === '') return 'nothing (empty output)';
  const chars = [...text.slice(0, max * 2)].slice(0, max);
  const shown = chars
    .map((c) => {
      if (c === '\n') return '\\n';
      if (c === '\t') return '\\t';
      if (c === '\r') return '\\r';
      if (c === '\x1b') return '\\e';
      if (c === '"' || c === '\\') return `\\${c}`;
      if (/^[\x20-\x7e]$/.test(c)) return c;
      const cp = c.codePointAt(0)!;
      return cp > 0xffff ? `\\u{${cp.toString(16)}}` : `\\u${cp.toString(16).padStart(4, '0')}`;
    })
    .join('');
  const more = [...text].length > chars.length;
  return `"${shown}"${more ? `… (${text.length} characters)` : ''}`;
}

/** The first line of an error a command printed, made safe to show, at most `max` characters. */
export function firstLineExcerpt(text: string, max = 160): string {
  const line = text.trim().split('\n')[0] ?? '';
  const chars = [...line].slice(0, max);
  const shown = chars
    .map((c) => (/^[\x20-\x7e]$/.test(c) ? c : `\\u${c.codePointAt(0)!.toString(16).padStart(4, '0')}`))
    .join('');
  return chars.length < [...line].length ? `${shown}…` : shown;
}
