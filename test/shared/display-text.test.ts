// Text from elsewhere, shown: control and reordering characters become JSON escapes (so a JSON document stays
// valid and reads back the same), one-line fields keep to one line, and URLs lose their userinfo.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isPlainLine, oneLine, redactUserinfo, visibleLayout } from '../../src/shared/display-text';

describe('display text', () => {
  it('shows controls, DEL, C1 and bidi controls as escapes; keeps layout newlines and tabs where asked', () => {
    const s = 'a\x1b]0;t\x07\x1b[2J\x7f\u009b\u202e\u2066\u2028\r\tb\nc';
    expect(oneLine(s)).toBe('a\\u001b]0;t\\u0007\\u001b[2J\\u007f\\u009b\\u202e\\u2066\\u2028\\r\\tb\\nc');
    expect(visibleLayout(s)).toBe(
      'a\\u001b]0;t\\u0007\\u001b[2J\\u007f\\u009b\\u202e\\u2066\\u2028\\r\tb\nc',
    );
    // Text that needs nothing is left as it is, letters of any script included.
    expect(oneLine('décodeur 解码 — 90 %')).toBe('décodeur 解码 — 90 %');
  });

  it('leaves JSON valid: the escapes are JSON’s, and the document reads back the same', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        fc.pre(!s.includes('://'));
        const doc = JSON.stringify({ s }, null, 2);
        expect(JSON.parse(visibleLayout(doc))).toEqual({ s });
      }),
    );
  });

  it('removes the userinfo of every URL, up to the last @ of the authority', () => {
    expect(redactUserinfo('worker http://admin:PW@10.0.0.2:30000/x down')).toBe(
      'worker http://***@10.0.0.2:30000/x down',
    );
    expect(redactUserinfo('https://tok@h and http://a:p@ss@h:1')).toBe('https://***@h and http://***@h:1');
    // A JSON string ends the URL: the next field's user@host is not taken for userinfo.
    expect(redactUserinfo('{"url":"http://h:1","user":"ops@gpu1"}')).toBe(
      '{"url":"http://h:1","user":"ops@gpu1"}',
    );
    expect(redactUserinfo('ssh ops@gpu1, http://h/p?q=a@b#c@d')).toBe('ssh ops@gpu1, http://h/p?q=a@b#c@d');
    expect(oneLine('http://u:p@h')).toBe('http://***@h');
    expect(redactUserinfo('://x@y then http://u@h')).toBe('://x@y then http://***@h');
  });

  it('takes linear time whatever the text: a long scheme-like run, or URLs without a break', () => {
    const time = (s: string): number => {
      const t = performance.now();
      redactUserinfo(s);
      return performance.now() - t;
    };
    time('a.'.repeat(1000) + 'http://'.repeat(1000));
    // 400 kB / 1.4 MB of output (a label value printed by parse --json): a backtracking pattern took seconds to
    // minutes on the first; one pass takes milliseconds on both.
    expect(time('a.'.repeat(200_000))).toBeLessThan(1000);
    expect(time('http://'.repeat(200_000))).toBeLessThan(1000);
  });

  it('tells a plain one-line label from one with breaks or controls', () => {
    expect(isPlainLine('lab box (powered off) — GPU 8×H100')).toBe(true);
    for (const bad of ['a\nb', 'a\tb', 'a\rb', 'a\x1b[2Jb', 'a\u009bb', 'a\u202eb', 'a\u2028b'])
      expect(isPlainLine(bad), JSON.stringify(bad)).toBe(false);
  });
});
