// The CLI on the same core: status --json has the documented shape and agrees with the demo host;
// discover and metrics work; bad arguments exit 2 with a message.
import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/main/cli/main';

async function cli(argv: string[], stdin = ''): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(argv, {
    stdout: (s) => (out += s),
    stderr: (s) => (err += s),
    readStdin: async () => stdin,
  });
  return { code, out, err };
}

describe('pd-console CLI', () => {
  it('status --json prints host, connection and per-service state with KV where the service has one', async () => {
    const r = await cli(['status', '--host', 'demo', '--json']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    expect(j.host).toMatch(/demo/);
    expect(j.connection).toBe('connected');
    expect(j.services.map((s: { role: string }) => s.role)).toEqual(['prefill', 'decode', 'router']);
    const decode = j.services[1];
    expect(decode).toMatchObject({
      unit: 'sglang-decode.service',
      activeState: 'active',
      subState: 'running',
    });
    expect(decode.kv.capacityTokens).toBe(2_580_000);
    expect(decode.kv.ratio).toBeCloseTo(decode.kv.usedTokens / decode.kv.capacityTokens, 6);
    expect(decode.kv.source).toBe('kv_tokens');
    expect(j.services[2].kv).toBeUndefined();
  });

  it('status --json of the one-host demo is the report every deployment gets: its router, host and worker names', async () => {
    const r = await cli(['status', '--host', 'demo', '--json', '--wait', '0']);
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(r.out);
    expect(j.hostLabel).toBe('demo GPU host (simulated)');
    expect(j.hosts.map((h: { id: string; via: string }) => [h.id, h.via])).toEqual([[j.host, 'origin']]);
    expect(j.routers.map((x: { apiUrl: string }) => x.apiUrl)).toEqual([j.services[2].url]);
    expect(j.services.map((s: { name: string }) => s.name)).toEqual(['prefill-0', 'decode-0', 'router']);
    expect(j.roles.decode).toMatchObject({ workers: 1, healthy: 1, fullest: { name: 'decode-0' } });
    expect(j.unplaced).toEqual([]);
    expect(j.unrouted).toEqual([]);
  });

  it('discover lists the units with endpoints; metrics shows the inventory', async () => {
    const d = await cli(['discover', '--host', 'demo']);
    expect(d.code).toBe(0);
    expect(d.out).toContain('sglang-decode.service');
    expect(d.out).toContain('http://127.0.0.1:29001/metrics');
    const m = await cli(['metrics', '--service', 'decode', '--host', 'demo', '--json']);
    expect(m.code).toBe(0);
    const inv = JSON.parse(m.out);
    const names = inv.families.map((f: { name: string }) => f.name);
    expect(names).toContain('sglang:kv_used_tokens');
    expect(
      inv.families.find((f: { name: string }) => f.name === 'sglang:time_to_first_token_seconds')?.type,
    ).toBe('histogram');
  });

  it('rejects bad arguments with exit code 2 and a reason', async () => {
    expect((await cli(['metrics', '--service', 'gpu'])).code).toBe(2);
    expect((await cli(['frobnicate'])).code).toBe(2);
    const p = await cli(['parse', '--format', 'prometheus'], 'm{a="1"} 1\nm{ 2\n');
    expect(p.code).not.toBe(0);
    expect(p.err).toMatch(/line 2/);
    expect((await cli(['parse', '--format', 'prometheus'], '# TYPE m gauge\nm 1\n')).code).toBe(0);
  });

  it('an unreachable host fails with a message, not a hang', async () => {
    const r = await cli(['status', '--host', 'nobody@127.0.0.1:1']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/127\.0\.0\.1/);
  });
});
