// Discovery against a real systemd 252: every form operators write units in, read the way systemd and the kernel
// answer — the running process's argv, unit files with systemd's quoting and drop-ins, EnvironmentFiles, wrapper
// scripts — with exact ports, metrics flags and roles, and no fix built on a value discovery could not read.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realSystemdUnavailableReason } from './container';
import {
  bootRealDeployment,
  cliOn,
  PORTS,
  realHost1P1D,
  realHostWrappers,
  waitListening,
  type RealDeployment,
} from './scenario';

const skip = realSystemdUnavailableReason();
if (skip) console.warn(`[skipped] discovery against a real systemd: ${skip}`);

interface DiscoverJson {
  found: Array<{ unit: string; role?: string; source: string; pid?: number }>;
  proposal: { services: Array<{ role: string; unit: string; apiUrl: string; metricsUrl?: string }> };
  diagnostics: Array<{ severity: string; code: string; unit?: string; message: string; fix?: string }>;
}

async function discover(d: RealDeployment): Promise<DiscoverJson & { code: number }> {
  const r = await cliOn(d, ['discover', '--host', d.alias, '--json']);
  if (!r.stdout.trim().startsWith('{')) throw new Error(`discover printed no JSON: ${r.stdout}${r.stderr}`);
  return { ...(JSON.parse(r.stdout) as DiscoverJson), code: r.code };
}

const apiOf = (r: DiscoverJson, role: string) => r.proposal.services.find((s) => s.role === role);

describe.skipIf(skip !== null)('discovery on a real systemd host', () => {
  describe('running units: EnvironmentFile ${VAR}, a drop-in that replaces ExecStart, quotes and JSON, a wrapper script', () => {
    let d: RealDeployment;
    beforeAll(async () => {
      d = await bootRealDeployment((a) => realHost1P1D(a));
      await waitListening(d.host, [PORTS.prefill, PORTS.decode, PORTS.router, PORTS.routerMetrics]);
    }, 300_000);
    afterAll(async () => d?.stop());

    it('finds all three units with the ports, metrics and roles their processes run with', async () => {
      const r = await discover(d);
      const a = d.host.address;
      expect(apiOf(r, 'prefill')).toMatchObject({
        unit: 'dsv4-prefill.service',
        apiUrl: `http://${a}:${PORTS.prefill}`,
        metricsUrl: `http://${a}:${PORTS.prefill}/metrics`,
      });
      expect(apiOf(r, 'decode')).toMatchObject({
        unit: 'dsv4-decode.service',
        apiUrl: `http://${a}:${PORTS.decode}`,
        metricsUrl: `http://${a}:${PORTS.decode}/metrics`,
      });
      expect(apiOf(r, 'router')).toMatchObject({
        unit: 'dsv4-router.service',
        apiUrl: `http://${a}:${PORTS.router}`,
        metricsUrl: `http://${a}:${PORTS.routerMetrics}/metrics`,
      });
      expect(r.found.map((f) => [f.unit, f.source])).toEqual(
        expect.arrayContaining([
          ['dsv4-prefill.service', 'process'],
          ['dsv4-decode.service', 'process'],
          ['dsv4-router.service', 'process'],
        ]),
      );
      expect(r.diagnostics.filter((x) => x.severity !== 'info')).toEqual([]);
      expect(r.code).toBe(0);
    });

    it('says the running process differs from the unit after an edit and a daemon-reload, and keeps the running port', async () => {
      await d.host.root(
        `sed -i 's/--port ${PORTS.decode}/--port 31250/' /etc/systemd/system/dsv4-decode.service.d/override.conf && systemctl daemon-reload`,
      );
      try {
        const r = await discover(d);
        expect(apiOf(r, 'decode')?.apiUrl).toBe(`http://${d.host.address}:${PORTS.decode}`);
        const diff = r.diagnostics.find((x) => x.code === 'running-differs');
        expect(diff?.unit).toBe('dsv4-decode.service');
        expect(diff?.message).toContain(`is running with --port ${PORTS.decode}`);
        expect(diff?.message).toContain('its unit files now say --port 31250');
        expect(diff?.fix).toContain('restart dsv4-decode.service');
      } finally {
        await d.host.root(
          `sed -i 's/--port 31250/--port ${PORTS.decode}/' /etc/systemd/system/dsv4-decode.service.d/override.conf && systemctl daemon-reload`,
        );
      }
    });
  });

  describe('the same units stopped: read from unit files, drop-ins, EnvironmentFiles and the wrapper script', () => {
    let d: RealDeployment;
    beforeAll(async () => {
      d = await bootRealDeployment((a) => ({ ...realHost1P1D(a), enable: [] }));
    }, 300_000);
    afterAll(async () => d?.stop());

    it('resolves ${PREFILL_PORT} from the EnvironmentFile, the drop-in port, and the router inside its script', async () => {
      const r = await discover(d);
      const a = d.host.address;
      expect(apiOf(r, 'prefill')?.apiUrl).toBe(`http://${a}:${PORTS.prefill}`);
      expect(apiOf(r, 'decode')?.apiUrl).toBe(`http://${a}:${PORTS.decode}`);
      expect(apiOf(r, 'router')?.apiUrl).toBe(`http://${a}:${PORTS.router}`);
      const sources = Object.fromEntries(r.found.map((f) => [f.unit, f.source]));
      expect(sources).toMatchObject({
        'dsv4-prefill.service': 'unit-file',
        'dsv4-decode.service': 'unit-file',
        'dsv4-router.service': 'script',
      });
      expect(r.diagnostics.filter((x) => x.severity === 'error')).toEqual([]);
    });

    it('with the EnvironmentFile unreadable, says the port is unknown and which file to read — and proposes no fix from a guess', async () => {
      await d.host.root('chmod 0600 /etc/sglang/dsv4.env');
      try {
        const r = await discover(d);
        expect(apiOf(r, 'prefill')).toBeUndefined();
        const unknown = r.diagnostics.find(
          (x) => x.code === 'unresolved-env' && x.unit === 'dsv4-prefill.service',
        );
        expect(unknown?.severity).toBe('error');
        expect(unknown?.message).toContain('--port');
        expect(unknown?.message).toContain('$PREFILL_PORT');
        expect(unknown?.message).toContain('/etc/sglang/dsv4.env');
        expect(JSON.stringify(r.diagnostics)).not.toMatch(/assuming|30000/);
        // The router's --prefill URL is not "wrong": the server behind it could not be read — said, with no fix.
        expect(r.diagnostics.filter((x) => x.code === 'metrics-disabled')).toEqual([]);
        const url = r.diagnostics.filter((x) => x.code === 'router-url-mismatch');
        expect(url.map((x) => [x.severity, x.fix])).toEqual([['warning', undefined]]);
        expect(url[0].message).toContain('dsv4-prefill.service may be it');
      } finally {
        await d.host.root('chmod 0644 /etc/sglang/dsv4.env');
      }
    });
  });

  describe('behind bash -c (with and without exec) and env', () => {
    let d: RealDeployment;
    beforeAll(async () => {
      d = await bootRealDeployment((a) => realHostWrappers(a));
      await waitListening(d.host, [PORTS.prefill, PORTS.decode, PORTS.router]);
    }, 300_000);
    afterAll(async () => d?.stop());

    it('reads each server from its own process, and the GPUs env set before exec', async () => {
      const r = await discover(d);
      const a = d.host.address;
      expect(apiOf(r, 'prefill')?.apiUrl).toBe(`http://${a}:${PORTS.prefill}`);
      expect(apiOf(r, 'decode')?.apiUrl).toBe(`http://${a}:${PORTS.decode}`);
      expect(apiOf(r, 'router')?.apiUrl).toBe(`http://${a}:${PORTS.router}`);
      expect(r.proposal.services.find((s) => s.role === 'decode')).toMatchObject({ gpus: [4, 5, 6, 7] });
      // bash without exec stays the unit's MainPID; the server is its child, read as such.
      const prefill = r.found.find((f) => f.unit === 'dsv4-prefill.service');
      const mainPid = (
        await d.host.root('systemctl show -p MainPID --value dsv4-prefill.service')
      ).stdout.trim();
      expect(prefill?.source).toBe('process');
      expect(String(prefill?.pid)).not.toBe(mainPid);
      expect(r.diagnostics.filter((x) => x.severity !== 'info')).toEqual([]);
    });
  });
});
