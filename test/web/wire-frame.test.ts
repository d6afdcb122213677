// Browser mode's server→page frames: a frame with long runs of numbers (a page's history) goes as bytes and
// reads back as exactly what JSON would have carried; every other frame is the same JSON text as before; and
// a damaged binary frame is refused with a message that says what is wrong with it.
import { describe, expect, it } from 'vitest';
import type { ServerFrame } from '../../src/shared/contract';
import { decodeServerFrame, encodeServerFrame, PACK_MIN_LENGTH } from '../../src/shared/wire-frame';

/** What the page got before: the frame through JSON text. */
const viaJson = (f: ServerFrame): unknown => JSON.parse(JSON.stringify(f));

function historyAnswer(points: number): ServerFrame {
  const t = Array.from({ length: points }, (_, i) => 1_796_350_517_093 + i * 1000);
  const v: (number | null)[] = t.map((_, i) => Math.sin(i / 7) * 0.123456789012345);
  v[3] = null;
  return {
    t: 'res',
    id: 42,
    envelope: {
      ok: true,
      result: {
        results: [
          {
            series: [
              { key: 'decode.ttft_p50_s', t, v },
              { key: 'decode.ttft_p90_s', t: [], v: [] },
            ],
            firstMs: t[0],
            lastMs: t[t.length - 1],
            rawPoints: points * 10,
            decimated: true,
            missing: { 'decode.ttft_p99_s': { expected: ['sglang:ttft'], why: 'not exposed' } },
          },
        ],
      },
    },
  };
}

describe('browser-mode frames (wire-frame.ts)', () => {
  it('sends a history answer as bytes, about half the JSON, and reads it back as JSON would have', () => {
    const frame = historyAnswer(900);
    const sent = encodeServerFrame(frame);
    expect(sent).toBeInstanceOf(Uint8Array);
    const bytes = (sent as Uint8Array).byteLength;
    expect(bytes).toBeLessThan(JSON.stringify(frame).length * 0.6);
    expect(decodeServerFrame(sent as Uint8Array)).toEqual(viaJson(frame));
    // As Node's ws hands it: a Buffer at an odd offset of a larger one (float64 reads need 8-byte alignment).
    const odd = Buffer.concat([Buffer.from([0]), sent as Uint8Array]).subarray(1);
    expect(odd.byteOffset % 8).not.toBe(0);
    expect(decodeServerFrame(odd)).toEqual(viaJson(frame));
  });

  it('reads numbers JSON cannot carry as JSON writes them: NaN and ±Infinity as null, −0 as 0', () => {
    const v = Array.from({ length: PACK_MIN_LENGTH }, (_, i) => i + 0.5);
    v[0] = NaN;
    v[1] = Infinity;
    v[2] = -Infinity;
    v[3] = -0;
    v[4] = Number.MAX_VALUE;
    v[5] = Number.MIN_VALUE;
    const frame: ServerFrame = { t: 'res', id: 1, envelope: { ok: true, result: { v } } };
    const sent = encodeServerFrame(frame);
    expect(sent).toBeInstanceOf(Uint8Array);
    const back = decodeServerFrame(sent as Uint8Array) as {
      envelope: { result: { v: unknown[] } };
    };
    expect(back).toEqual(viaJson(frame));
    expect(back.envelope.result.v.slice(0, 6)).toEqual([
      null,
      null,
      null,
      0,
      Number.MAX_VALUE,
      Number.MIN_VALUE,
    ]);
    expect(Object.is(back.envelope.result.v[3], 0)).toBe(true);
  });

  it('leaves every other frame as the JSON text it was: events, short runs, strings, mixed arrays', () => {
    const long = Array.from({ length: PACK_MIN_LENGTH }, (_, i) => i);
    const frames: ServerFrame[] = [
      {
        t: 'evt',
        event: 'signals',
        payload: { deploymentId: 'demo', ts: 1, values: { 'decode.kv_ratio': 0.5 } },
      },
      { t: 'res', id: 2, envelope: { ok: true, result: { t: long.slice(1) } } },
      { t: 'res', id: 3, envelope: { ok: true, result: { lines: long.map((i) => `line ${i}`) } } },
      { t: 'res', id: 4, envelope: { ok: true, result: { mixed: [...long, 'x'] } } },
      {
        t: 'res',
        id: 5,
        envelope: { ok: false, error: { code: 'not-found', message: 'no such deployment' } },
      },
    ];
    for (const f of frames) {
      const sent = encodeServerFrame(f);
      expect(sent).toBe(JSON.stringify(f));
      expect(decodeServerFrame(sent as string)).toEqual(viaJson(f));
    }
  });

  it('packs runs at any depth, each read back in its own place', () => {
    const a = Array.from({ length: PACK_MIN_LENGTH }, (_, i) => i);
    const b = Array.from({ length: PACK_MIN_LENGTH * 2 }, (_, i) => -i / 3);
    const frame: ServerFrame = {
      t: 'res',
      id: 9,
      envelope: { ok: true, result: { outer: [{ a }, { inner: { b, label: 'x' } }], a2: a } },
    };
    const sent = encodeServerFrame(frame) as Uint8Array;
    expect(sent).toBeInstanceOf(Uint8Array);
    expect(decodeServerFrame(sent)).toEqual(viaJson(frame));
  });

  it('refuses a damaged binary frame with what is wrong with it', () => {
    const good = encodeServerFrame(historyAnswer(100)) as Uint8Array;
    expect(() => decodeServerFrame(new ArrayBuffer(2))).toThrow('a binary frame of 2 bytes has no header');
    const lying = good.slice();
    new DataView(lying.buffer).setUint32(0, 10_000_000, true);
    expect(() => decodeServerFrame(lying)).toThrow(/says its JSON part is 10000000 bytes, past its end/);
    // The numbers cut short: the references point past what arrived.
    expect(() => decodeServerFrame(good.slice(0, good.byteLength - 8))).toThrow(
      /refers to numbers \d+…\d+ of \d+/,
    );
    const notJson = good.slice();
    notJson[4] = 0x7b + 1;
    expect(() => decodeServerFrame(notJson)).toThrow(SyntaxError);
  });
});
