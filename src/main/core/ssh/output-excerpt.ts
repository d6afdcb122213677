// How a host's answer is quoted in a message when it is not what the command prints: its first characters,
// bounded and quoted, made safe by oneLine (control characters shown as escapes, URL userinfo hidden), so a
// terminal escape sequence or a NUL in the answer shows as text instead of acting on the operator's terminal.
import { oneLine } from '@shared/display-text';

/** Characters of an answer quoted in a message. */
export const EXCERPT_CHARS = 80;

function head(text: string, max: number): { shown: string; cut: boolean } {
  const chars = [...text.slice(0, max * 2)].slice(0, max);
  const shown = chars.join('');
  return { shown, cut: shown.length < text.length };
}

/** `"first characters…" (N characters)`, or that the answer was empty. */
export function outputExcerpt(text: string, max = EXCERPT_CHARS): string {
  if (text === '') return 'nothing (empty output)';
  const { shown, cut } = head(text, max);
  return `"${oneLine(shown).replace(/"/g, '\\"')}"${cut ? `… (${text.length} characters)` : ''}`;
}

/** The first line of an error a command printed, made safe to show, at most `max` characters. */
export function firstLineExcerpt(text: string, max = 160): string {
  const { shown, cut } = head(text.trim().split('\n')[0] ?? '', max);
  return `${oneLine(shown)}${cut ? '…' : ''}`;
}
