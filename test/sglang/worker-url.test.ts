// The router's worker URLs are normalised once and remembered (the same few every scrape): a remembered answer
// must be the answer, also after the bounded memory started over.
import { describe, expect, it } from 'vitest';
import { normalizeWorkerUrl } from '../../src/shared/worker-url';

describe('normalizeWorkerUrl', () => {
  it('answers the same the first time and every time after', () => {
    const cases: [string, string][] = [
      ['10.0.0.5:30000', 'http://10.0.0.5:30000'],
      ['HTTP://GPU-A:30000/', 'http://gpu-a:30000'],
      [' https://Host.Example:8443/v1// ', 'https://host.example:8443/v1'],
      ['http://gpu-b:30001/Path', 'http://gpu-b:30001/Path'],
    ];
    for (let round = 0; round < 3; round++)
      for (const [raw, want] of cases) expect(normalizeWorkerUrl(raw)).toBe(want);
  });

  it('stays right for more distinct URLs than it remembers', () => {
    for (let round = 0; round < 2; round++)
      for (let i = 0; i < 3000; i++)
        expect(normalizeWorkerUrl(`GPU-${i}:30000/`)).toBe(`http://gpu-${i}:30000`);
  });
});
