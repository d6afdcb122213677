// The parser's entry points: format negotiation (Accept / Content-Type) and the JSON rendering.

import { describe, expect, it } from 'vitest';
import { expositionToJson } from '../../src/main/core/probes/exposition/json';
import {
  ACCEPT_HEADER,
  formatFromContentType,
  parseExposition,
} from '../../src/main/core/probes/exposition/parser';
import type { ExpositionFormat } from '../../src/main/core/probes/exposition/types';

describe('formatFromContentType', () => {
  it.each([
    ['application/openmetrics-text; version=1.0.0; charset=utf-8', 'openmetrics'],
    ['application/openmetrics-text;version=0.0.1', 'openmetrics'],
    ['Application/OpenMetrics-Text', 'openmetrics'],
    ['text/plain; version=0.0.4; charset=utf-8', 'prometheus'],
    ['text/plain', 'prometheus'],
    [undefined, 'prometheus'],
    ['', 'prometheus'],
    ['text/html', 'prometheus'],
  ] as const)('%s → %s', (contentType, format) => {
    expect(formatFromContentType(contentType)).toBe(format);
  });
});

describe('ACCEPT_HEADER', () => {
  it('asks for OpenMetrics 1.0 first, then the 0.0.4 text format, by decreasing q', () => {
    const ranges = ACCEPT_HEADER.split(',').map((r) => {
      const [type, ...params] = r.split(';');
      const q = params.find((p) => p.startsWith('q='));
      return { type, version: params.find((p) => p.startsWith('version=')), q: q ? Number(q.slice(2)) : 1 };
    });
    expect(ranges[0]).toEqual({ type: 'application/openmetrics-text', version: 'version=1.0.0', q: 1 });
    const text = ranges.find((r) => r.type === 'text/plain');
    expect(text?.version).toBe('version=0.0.4');
    expect(text!.q).toBeLessThan(ranges[0].q);
    // what prometheus_client's choose_encoder looks for to answer in OpenMetrics
    expect(
      ACCEPT_HEADER.split(',').some((r) => r.split(';')[0].trim() === 'application/openmetrics-text'),
    ).toBe(true);
  });
});

describe('parseExposition', () => {
  it('rejects an unknown format name at runtime (callers may pass unchecked strings)', () => {
    expect(() => parseExposition('a 1\n', 'json' as ExpositionFormat)).toThrow(
      /unknown exposition format "json"/,
    );
  });

  it('is pure: the same input gives equal, independent results', () => {
    const text = 'm{a="1"} 1\nm{a="2"} 2\n';
    const first = parseExposition(text, 'prometheus');
    first.families[0].samples[0].labels.a = 'changed';
    expect(parseExposition(text, 'prometheus').families[0].samples[0].labels.a).toBe('1');
  });

  it('gives every sample its own labels object', () => {
    const e = parseExposition('m{a="1"} 1\nm{a="1"} 2\n', 'prometheus');
    expect(e.families[0].samples[0].labels).not.toBe(e.families[0].samples[1].labels);
  });
});

describe('expositionToJson', () => {
  it('writes NaN and infinities as "NaN", "+Inf", "-Inf" and leaves other numbers alone', () => {
    const e = parseExposition('a NaN\nb +Inf\nc -Inf 5\nd 1.5\n', 'prometheus');
    const parsed = JSON.parse(expositionToJson(e)) as { families: { samples: { value: unknown }[] }[] };
    expect(parsed.families.map((f) => f.samples[0].value)).toEqual(['NaN', '+Inf', '-Inf', 1.5]);
    expect(JSON.parse(expositionToJson(e))).toMatchObject({ format: 'prometheus', sampleCount: 4 });
  });
});
