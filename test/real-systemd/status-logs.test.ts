// status and logs against a real systemd 252 and journald: a crash loop, a Restart=no failure, a model still
// loading, a unit an operator stopped — each named as systemd means it, with the journal's evidence; the journal
// as journald gives it (a 5 KB line whole, a \r progress bar as its last redraw, invalid UTF-8 decoded, the API key
// removed). Everything goes through the product's real SSH client.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realSystemdUnavailableReason } from './container';
import {
  API_KEY,
  bootRealDeployment,
  cliOn,
  PORTS,
  realHost1P1D,
  waitListening,
  type RealDeployment,
  type Scenario,
} from './scenario';

const skip = realSystemdUnavailableReason();
if (skip) console.warn(`[skipped] status and logs against a real systemd: ${skip}`);

const IMPORT_ERROR =
  'ImportError: libcudart.so.12: cannot open shared object file: No such file or directory';
const OOM = 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB';

/** Adds a drop-in to a unit of the scenario. */
function dropIn(s: Scenario, unit: string, lines: string[]): Scenario {
  return {
    ...s,
    files: {
      ...s.files,
      [`/etc/systemd/system/${unit}.d/50-test.conf`]: ['[Service]', ...lines, ''].join('\n'),
    },
  };
}

interface StatusJson {
  services: Array<{ role: string; condition: { kind: string; text: string; nextStep?: string } }>;
}

async function statusJson(d: RealDeployment): Promise<{ code: number; json: StatusJson }> {
  const r = await cliOn(d, ['status', '--host', d.alias, '--json', '--wait', '0']);
  return { code: r.code, json: JSON.parse(r.stdout) as StatusJson };
}

describe.skipIf(skip !== null)('status and logs on a real systemd host', () => {
  describe('decode crash-looping (Restart=always), prefill loaded with a 64-shard tqdm bar and invalid UTF-8', () => {
    let d: RealDeployment;
    beforeAll(async () => {
      d = await bootRealDeployment((a) =>
        dropIn(
          realHost1P1D(a, {
            'dsv4-decode.service': { failWith: IMPORT_ERROR },
            'dsv4-prefill.service': { shards: 64, invalidUtf8: true },
          }),
          'dsv4-decode.service',
          ['[Unit]', 'StartLimitIntervalSec=0', '[Service]', 'Restart=always', 'RestartSec=1'],
        ),
      );
      await waitListening(d.host, [PORTS.prefill, PORTS.router]);
      // Two automatic restarts are a loop (systemd's own counter, read as the product reads it).
      await d.host.root(
        'timeout 60 sh -c "until [ $(systemctl show -p NRestarts --value dsv4-decode.service) -ge 2 ]; do sleep 0.2; done"',
      );
    }, 300_000);
    afterAll(async () => d?.stop());

    it('status names the crash loop with its restart count, exit status and the ImportError, and exits 3', async () => {
      const text = await cliOn(d, ['status', '--host', d.alias, '--wait', '0']);
      expect(text.code).toBe(3);
      const line = text.stdout.split('\n').find((l) => l.startsWith('decode'));
      expect(line).toMatch(/crash-looping: restart \d+, exit status 1/);
      expect(line).toContain(IMPORT_ERROR);
      expect(text.stdout).toContain('next: open the journal at the crash');
      expect(text.stdout).not.toMatch(/check the port|connection refused \(process not listening yet/);
      const { json } = await statusJson(d);
      const decode = json.services.find((s) => s.role === 'decode');
      expect(decode?.condition.kind).toBe('crash-looping');
      expect(json.services.find((s) => s.role === 'prefill')?.condition.kind).toBe('serving');
    });

    it('logs gives the journal as journald has it: the long start-up line whole, each bar redraw as a terminal shows it, bytes decoded, no API key', async () => {
      const r = await cliOn(d, ['logs', 'prefill', '--host', d.alias, '-n', '200']);
      expect(r.code).toBe(0);
      const serverArgs = r.stdout.split('\n').find((l) => l.includes('server_args=ServerArgs('));
      expect(serverArgs?.length).toBeGreaterThan(4096);
      expect(serverArgs).toContain(`served_model_name="DeepSeek's V4 Flash"`);
      expect(r.stdout).not.toContain('larger than 4096 bytes');
      // SGLang's shard bar ends each redraw with a newline (weight_utils.py _BAR_FORMAT): journald keeps a line
      // per redraw, led by "\r"; each shows as its redraw, without the carriage return.
      expect(r.stdout).toContain('Loading safetensors checkpoint shards: 100% Completed | 64/64');
      expect(r.stdout).toMatch(/ Loading safetensors checkpoint shards: {3}0% Completed \| 0\/64 /);
      expect(r.stdout).not.toContain('\r');
      expect(r.stdout).toContain('Detokenizer output: \ufffd\ufffd\ufffd( garbled');
      expect(r.stdout).not.toContain(API_KEY);
      expect(r.stdout).toContain('[REDACTED]');
      const decode = await cliOn(d, ['logs', 'decode', '--host', d.alias, '-n', '300', '--json']);
      const lines = decode.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { message: string; identifier: string });
      expect(lines.some((l) => l.message === IMPORT_ERROR)).toBe(true);
      expect(
        lines.some(
          (l) =>
            l.identifier === 'systemd' &&
            /Main process exited, code=exited, status=1\/FAILURE/.test(l.message),
        ),
      ).toBe(true);
    });
  });

  describe('decode failed with Restart=no, prefill still loading its model, router stopped by an operator', () => {
    let d: RealDeployment;
    beforeAll(async () => {
      d = await bootRealDeployment((a) =>
        dropIn(
          realHost1P1D(a, {
            'dsv4-decode.service': { failWith: OOM },
            'dsv4-prefill.service': { loadSeconds: 600, shards: 17 },
          }),
          'dsv4-decode.service',
          ['[Service]', 'Restart=no'],
        ),
      );
      await waitListening(d.host, [PORTS.router]);
      await d.host.root(
        'timeout 60 sh -c "until systemctl is-failed -q dsv4-decode.service; do sleep 0.2; done"; systemctl stop dsv4-router.service',
      );
    }, 300_000);
    afterAll(async () => d?.stop());

    it('says failed with the exit status, Restart=no and the OOM; loading; stopped by an operator', async () => {
      const { code, json } = await statusJson(d);
      expect(code).toBe(3);
      const by = Object.fromEntries(json.services.map((s) => [s.role, s.condition]));
      expect(by.decode.kind).toBe('failed');
      expect(by.decode.text).toBe(`failed (exit status 1, Restart=no) (${OOM})`);
      expect(by.prefill.kind).toBe('loading');
      expect(by.prefill.text).toMatch(/^running, model loading \(\d+ s\)$/);
      expect(by.router.kind).toBe('stopped');
      expect(by.router.text).toBe('stopped by an operator');
    });
  });
});
