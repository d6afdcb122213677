// The fixture itself: a real systemd boots, runs the scenario's units, and answers as systemd 252 does — the facts
// the product's readers depend on, checked against the real program rather than our reading of its manual.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realSystemdUnavailableReason } from './container';
import { bootRealDeployment, realHost1P1D, SERVED_NAME, type RealDeployment } from './scenario';

const skip = realSystemdUnavailableReason();
if (skip) console.warn(`[skipped] tests against a real systemd: ${skip}`);

describe.skipIf(skip !== null)('real systemd container', () => {
  let d: RealDeployment;
  beforeAll(async () => {
    d = await bootRealDeployment((a) => realHost1P1D(a));
    // The stand-ins listen once "loaded", as SGLang's HTTP server does; wait for the three listeners.
    const r = await d.host.root(
      'timeout 60 sh -c \'until ss -ltn | grep -q ":31100 " && ss -ltn | grep -q ":31200 " && ss -ltn | grep -q ":31001 "; do sleep 0.1; done\'',
    );
    expect(r.code).toBe(0);
  }, 600_000);
  afterAll(async () => {
    await d?.stop();
  });

  it('runs the units as Type=simple: active/running while the model still loads', async () => {
    const r = await d.host.root(
      'systemctl show -p ActiveState,SubState --value dsv4-prefill.service dsv4-decode.service dsv4-router.service',
    );
    expect(r.stdout.trim().split(/\n+/)).toEqual([
      'active',
      'running',
      'active',
      'running',
      'active',
      'running',
    ]);
  });

  it('prints argv[] joined with plain spaces, variables unexpanded (what discovery must not split by quotes)', async () => {
    const r = await d.host.root('systemctl show -p ExecStart dsv4-prefill.service');
    expect(r.stdout).toContain(`--served-model-name ${SERVED_NAME} --host`);
    expect(r.stdout).toContain('--port ${PREFILL_PORT}');
    expect(r.stdout).toContain('--json-model-override-args {"a": 1, "note": "a b"}');
  });

  it('keeps the exact argv, expanded, in /proc/<MainPID>/cmdline', async () => {
    const pid = (await d.host.root('systemctl show -p MainPID --value dsv4-prefill.service')).stdout.trim();
    const argv = (await d.host.root(`cat /proc/${pid}/cmdline`)).stdout.split('\0');
    expect(argv).toContain(SERVED_NAME);
    expect(argv).toContain('{"a": 1, "note": "a b"}');
    expect(argv[argv.indexOf('--port') + 1]).toBe('31100');
  });

  it('gives journald lines over 4096 bytes as MESSAGE null in JSON unless --all', async () => {
    const plain = await d.host.root('journalctl -u dsv4-prefill.service -o json --no-pager');
    const all = await d.host.root('journalctl -u dsv4-prefill.service -o json --all --no-pager');
    const messages = (text: string): unknown[] =>
      text
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { MESSAGE: unknown }).MESSAGE);
    expect(messages(plain.stdout)).toContain(null);
    const long = messages(all.stdout).find(
      (m) => typeof m === 'string' && m.includes('server_args=ServerArgs('),
    );
    expect((long as string).length).toBeGreaterThan(4096);
  });
});
