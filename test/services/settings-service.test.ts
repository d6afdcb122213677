// Settings as the app lives them: a change made through the API is in the file at once and a new app over the
// same data folder (the next start, or the CLI) runs with it; a deployment's own alert rules replace the global
// list for it only; every change reaches every window; import previews, applies and keeps the old file; a broken
// file leaves the app on defaults, says so, and is never written over.
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/main/compose';
import type { AlertRule, DashboardPush, SettingsState } from '../../src/shared/contract';
import { discoverDeployment } from '../../src/main/core/discovery/discover';
import {
  CAT_DECODE_A,
  CAT_OLD_DECODE_A,
  CAT_PREFILL_A,
  CAT_ROUTER_A,
  LIST_UNITS_A,
} from '../discovery/units';

const apps: App[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.shutdown();
});

function start(dataDir: string, shell: 'browser' | 'cli' = 'browser'): App {
  const a = createApp({ shell, dataDir, record: shell === 'cli' ? undefined : false, intervalMs: 300 });
  apps.push(a);
  return a;
}

async function folder(): Promise<string> {
  return fs.mkdtemp(join(tmpdir(), 'pdc-settings-svc-'));
}

const kvRule = (rules: AlertRule[]): AlertRule => rules.find((r) => r.id === 'decode-kv-high')!;

describe('settings service', () => {
  it('setAlertRules persists: a new app over the same folder reads the edited rule back', async () => {
    const dir = await folder();
    const a = start(dir);
    const rules = await a.handlers.getAlertRules({});
    expect(kvRule(rules).threshold).toBe(0.9);
    await a.handlers.setAlertRules({
      rules: rules.map((r) => (r.id === 'decode-kv-high' ? { ...r, threshold: 0.55, forS: 7 } : r)),
    });
    const onDisk = JSON.parse(await fs.readFile(join(dir, 'settings.json'), 'utf8'));
    expect(kvRule(onDisk.alerts.rules)).toMatchObject({ threshold: 0.55, forS: 7 });
    await a.shutdown();

    const b = start(dir);
    expect(kvRule(await b.handlers.getAlertRules({}))).toMatchObject({ threshold: 0.55, forS: 7 });
  });

  it('restart and recording settings survive a restart, and the CLI runs with the saved restart settings', async () => {
    const dir = await folder();
    const a = start(dir);
    await a.handlers.setRestartSettings({
      stackOrder: 'prefill-first',
      timeouts: { server: { healthMs: 3_600_000 } },
    });
    await a.handlers.setRecordingSettings({ maxTotalBytes: 64 * 1024 ** 2 });
    await a.handlers.setUiSettings({ theme: 'dark', chartRange: '1h' });
    await a.shutdown();

    const cli = start(dir, 'cli');
    const r = await cli.handlers.getRestartSettings({});
    expect(r.stackOrder).toBe('prefill-first');
    expect(r.timeouts.server.healthMs).toBe(3_600_000);
    // A one-shot CLI command records nothing whatever the file says, and does not change the saved choice.
    expect((await cli.handlers.getRecordingStatus({})).settings).toEqual({
      enabled: false,
      maxTotalBytes: 64 * 1024 ** 2,
    });
    await cli.shutdown();

    const b = start(dir);
    const s = await b.handlers.getSettings({});
    expect(s.settings.ui).toEqual({ theme: 'dark', chartRange: '1h' });
    expect(s.settings.recording).toEqual({ enabled: true, maxTotalBytes: 64 * 1024 ** 2 });
    expect(s.problem).toBeUndefined();
  });

  it("a deployment's own rules replace the global list for that deployment only", async () => {
    const dir = await folder();
    const a = start(dir);
    const global = await a.handlers.getAlertRules({});
    // Globally every rule is off; for the demo deployment one rule fires as soon as decode reports any KV use.
    await a.handlers.setAlertRules({ rules: global.map((r) => ({ ...r, enabled: false })) });
    const own: AlertRule = { ...kvRule(global), id: 'demo-kv-any', threshold: 0, forS: 0 };
    await a.handlers.setDeploymentAlertRules({ deploymentId: 'demo', rules: [own] });

    const snaps: DashboardPush[] = [];
    a.core.on('dashboard', (s) => snaps.push(s));
    await a.core.openDemo({});
    await expect
      .poll(() => snaps.find((s) => s.alerts.some((x) => x.ruleId === 'demo-kv-any')), { timeout: 20_000 })
      .toBeTruthy();
    // Only the deployment's own list applies there: no global rule fires even though decode's KV is in use.
    expect(snaps.flatMap((s) => s.alerts.map((x) => x.ruleId)).every((id) => id === 'demo-kv-any')).toBe(
      true,
    );
    await a.shutdown();

    const b = start(dir);
    const s = await b.handlers.getSettings({});
    expect(s.settings.alerts.deployments.demo).toEqual([own]);
    expect(s.settings.alerts.rules.every((r) => !r.enabled)).toBe(true);
    await b.handlers.setDeploymentAlertRules({ deploymentId: 'demo', rules: null });
    expect((await b.handlers.getSettings({})).settings.alerts.deployments).toEqual({});
  });

  it('pushes every change to every window as a settings event', async () => {
    const a = start(await folder());
    const seen: SettingsState[] = [];
    a.core.on('settings', (s) => seen.push(s));
    await a.handlers.setUiSettings({ theme: 'light' });
    await a.handlers.setRestartSettings({ polkit: true });
    expect(seen.map((s) => [s.settings.ui.theme, s.settings.restart.polkit])).toEqual([
      ['light', false],
      ['light', true],
    ]);
  });

  it('imports a shared file: previews the changes, applies them, keeps settings.json.bak', async () => {
    const src = start(await folder());
    const rules = await src.handlers.getAlertRules({});
    await src.handlers.setAlertRules({
      rules: rules.map((r) => (r.id === 'decode-kv-high' ? { ...r, threshold: 0.6 } : r)),
    });
    const exported = await src.handlers.exportSettings({});
    expect(exported.fileName).toMatch(/^pd-console-settings-\d{4}-\d\d-\d\d\.json$/);

    const dir = await folder();
    const dst = start(dir);
    await dst.handlers.setUiSettings({ theme: 'dark' });
    const before = await fs.readFile(join(dir, 'settings.json'), 'utf8');
    const preview = await dst.handlers.importSettings({ text: exported.text, dryRun: true });
    expect(preview.applied).toBe(false);
    expect(preview.changes).toEqual([
      { path: 'alerts.rules[decode-kv-high].threshold', from: '0.9', to: '0.6' },
      { path: 'ui.theme', from: '"dark"', to: '"system"' },
    ]);
    expect(await fs.readFile(join(dir, 'settings.json'), 'utf8')).toBe(before);

    const done = await dst.handlers.importSettings({ text: exported.text });
    expect(done).toMatchObject({ applied: true, backup: join(dir, 'settings.json.bak') });
    expect(await fs.readFile(join(dir, 'settings.json.bak'), 'utf8')).toBe(before);
    expect(kvRule(await dst.handlers.getAlertRules({})).threshold).toBe(0.6);

    // A file with only alert rules shares only those: the theme stays.
    await dst.handlers.setUiSettings({ theme: 'dark' });
    const partial = JSON.stringify({ version: 1, alerts: { rules: [{ ...kvRule(rules), threshold: 0.7 }] } });
    const p = await dst.handlers.importSettings({ text: partial });
    expect(p.state.settings.ui.theme).toBe('dark');
    expect(p.state.settings.alerts.rules).toHaveLength(1);

    await expect(
      dst.handlers.importSettings({ text: '{ "version": 1, "ui": { "theme": "blue" } }' }),
    ).rejects.toThrow(/^the imported file:1:34: ui\.theme: /);
  });

  it('a broken file: the app runs on defaults, says so, applies changes to this run only and never writes over it', async () => {
    const dir = await folder();
    const file = join(dir, 'settings.json');
    const text = '{ "version": 1,\n  "alerts": { "rules": [ }\n}\n';
    await fs.writeFile(file, text);
    const a = start(dir);
    const s = await a.handlers.getSettings({});
    expect(s.problem?.message).toBe(`${file}:2:26: not valid JSON (unexpected "}")`);
    expect(s.problem?.hint).toMatch(
      /runs on default settings and will not save over this file until you fix it or move it/,
    );
    expect(kvRule(s.settings.alerts.rules).threshold).toBe(0.9);

    const rules = await a.handlers.getAlertRules({});
    await a.handlers.setAlertRules({ rules: rules.map((r) => ({ ...r, enabled: false })) });
    expect((await a.handlers.getAlertRules({})).every((r) => !r.enabled)).toBe(true);
    await expect(a.handlers.importSettings({ text: '{"version":1}' })).rejects.toThrow(/^not imported: /);
    expect(await fs.readFile(file, 'utf8')).toBe(text);

    // Fixed by hand, then reloaded: the file's settings are in effect and saving works again.
    await fs.writeFile(file, '{ "version": 1, "ui": { "theme": "dark" } }\n');
    const r = await a.handlers.reloadSettings({});
    expect(r.problem).toBeUndefined();
    expect(r.settings.ui.theme).toBe('dark');
    await a.handlers.setUiSettings({ chartRange: '24h' });
    expect(JSON.parse(await fs.readFile(file, 'utf8')).ui).toEqual({ theme: 'dark', chartRange: '24h' });
  });

  it('discovery uses the unit the operator chose for a role several units claim, saved per host', async () => {
    const dir = await folder();
    const a = start(dir);
    await a.handlers.setDiscoveryChoice({ hostId: 'gpu1', role: 'decode', unit: 'dsv4-old-decode.service' });
    await a.shutdown();
    const b = start(dir);
    const chosen = b.settings.discoveryChoices('gpu1');
    expect(chosen).toEqual({ decode: 'dsv4-old-decode.service' });
    const units = [
      { unit: 'dsv4-decode.service', cat: CAT_DECODE_A },
      { unit: 'dsv4-prefill.service', cat: CAT_PREFILL_A },
      { unit: 'dsv4-old-decode.service', cat: CAT_OLD_DECODE_A },
      { unit: 'pd-router.service', cat: CAT_ROUTER_A },
    ];
    const ranked = discoverDeployment({ hostId: 'gpu1', listUnits: LIST_UNITS_A, units });
    expect(ranked.deployment.services.find((s) => s.role === 'decode')?.unit).toBe('dsv4-decode.service');
    const picked = discoverDeployment({ hostId: 'gpu1', listUnits: LIST_UNITS_A, units, chosen });
    expect(picked.deployment.services.find((s) => s.role === 'decode')?.unit).toBe('dsv4-old-decode.service');
    expect(picked.needsOperatorChoice).toEqual([]);
    expect(picked.diagnostics.find((d) => d.code === 'duplicate-role')?.message).toMatch(
      /using dsv4-old-decode\.service, the unit you chose/,
    );
    expect(b.settings.discoveryChoices('other')).toEqual({});
  });
});
