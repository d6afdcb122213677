// One worker-URL module and one definition of "the host it is dialled from", used by discovery, the probes, the
// screens and the demo's simulated network: each address form answers the same everywhere.
import { describe, expect, it } from 'vitest';
import { isLoopbackHost, parseWorkerUrl, workerKey } from '../../src/shared/worker-url';
import { matchEndpoint } from '../../src/main/core/discovery/discover';
import { DemoSimulation } from '../../src/main/demo';
import { machineOf } from '../../src/main/demo/machine';
import { manualClock } from '../demo/helpers';

describe('isLoopbackHost', () => {
  // Which spellings name the dialling host; 127.0.0.5 is a loopback address by RFC 1122 but a server bound to
  // 127.0.0.1 refuses it (router-list.test.ts dials it), so as an endpoint it is another address.
  const cases: [string, boolean][] = [
    ['127.0.0.1', true],
    ['localhost', true],
    ['LOCALHOST.', true],
    ['::1', true],
    ['[::1]', true],
    ['::ffff:127.0.0.1', true],
    ['[::ffff:7f00:1]', true],
    ['0.0.0.0', true],
    ['::', true],
    ['[::]', true],
    [' 127.0.0.1 ', true],
    ['127.0.0.5', false],
    ['127.0.0.2', false],
    ['10.1.0.12', false],
    ['gpu-a', false],
    ['localhost.example', false],
    ['::2', false],
  ];
  for (const [host, want] of cases)
    it(`${JSON.stringify(host)} → ${want}`, () => expect(isLoopbackHost(host)).toBe(want));

  it('makes every loopback spelling of one port one worker, and another 127.x another', () => {
    const key = (u: string) => {
      const ep = parseWorkerUrl(u);
      if ('error' in ep) throw new Error(ep.error);
      return workerKey(ep);
    };
    const one = [
      'http://127.0.0.1:30000',
      'localhost:30000/',
      'http://[::1]:30000',
      'HTTP://LocalHost.:30000',
    ];
    expect(new Set(one.map(key))).toEqual(new Set(['loopback:30000']));
    expect(key('http://127.0.0.5:30000')).toBe('127.0.0.5:30000');
  });
});

describe('the router flag matched to a server: the same parser as the fleet', () => {
  it('reads a DP-rank suffix and user-info as the fleet does, not as user:password@host', () => {
    const server = { host: '127.0.0.1', port: 30200 };
    expect(matchEndpoint('http://127.0.0.1:30200@1', server)).toEqual({ ok: true, portMatches: true });
    expect(matchEndpoint('http://admin:pw@localhost:30200', server)).toEqual({ ok: true, portMatches: true });
    expect(matchEndpoint('[::1]:30200', server)).toEqual({ ok: true, portMatches: true });
    expect(matchEndpoint('ftp://127.0.0.1:30200', server)).toEqual({ ok: false, portMatches: false });
  });
});

describe("the demo's simulated network", () => {
  it('takes every spelling of the dialling host as that host, as the product does', () => {
    const sim = new DemoSimulation({ clock: manualClock(), historyMs: 60_000 });
    const m = machineOf(sim);
    for (const h of ['127.0.0.1', 'localhost', '::1', '::', '::ffff:127.0.0.1', '0.0.0.0'])
      expect([h, m.route(h, 30200) === m]).toEqual([h, true]);
    expect(m.route('10.9.9.9', 30200)).toBeNull();
  });
});
