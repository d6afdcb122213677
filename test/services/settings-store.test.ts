// The settings file: round trip, atomic 0600 writes, a broken or newer file reported with path:line:column and
// left byte for byte as it was (every save refuses), and the migration of the version-0 (in-memory) shape.
import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SettingsStore, SettingsStoreError, UNUSABLE_HINT } from '../../src/main/core/config/settings-store';
import { defaultSettings } from '../../src/main/core/config/settings-defaults';
import { migrate } from '../../src/main/core/config/settings-migrations';
import { DEFAULT_ALERT_RULES } from '../../src/main/core/alerts/rules';

let dir: string;
let n = 0;
const fresh = (): string => path.join(dir, `cfg-${++n}`, 'settings.json');

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pd-settings-'));
});
afterAll(() => fs.rm(dir, { recursive: true, force: true }));

async function write(file: string, text: string): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, text);
}

async function refusal(p: Promise<unknown>): Promise<SettingsStoreError> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(SettingsStoreError);
  return e as SettingsStoreError;
}

describe('SettingsStore', () => {
  it('runs on defaults without a file, and reads back exactly what it saved', async () => {
    const file = fresh();
    const store = new SettingsStore(file);
    const none = store.loadSync();
    expect(none).toMatchObject({ ok: true, exists: false, settings: defaultSettings() });

    const s = defaultSettings();
    s.alerts.rules[0].threshold = 0.75;
    s.alerts.deployments.demo = [{ ...s.alerts.rules[0], threshold: 0.5 }];
    s.restart.stackOrder = 'decode-first';
    s.restart.timeouts.server.healthMs = 90 * 60_000;
    s.recording = { enabled: false, maxTotalBytes: 64 * 1024 ** 2 };
    s.ui = { theme: 'dark', chartRange: '6h' };
    s.discovery.choices.gpu1 = { decode: 'dsv4-decode.service' };
    await store.save(s);

    const again = new SettingsStore(file);
    const sync = again.loadSync();
    const async = await again.load();
    expect(sync).toEqual({ ok: true, exists: true, settings: s, present: expect.any(Array) });
    expect(async).toEqual(sync);
    expect(JSON.parse(await fs.readFile(file, 'utf8')).version).toBe(1);
  });

  it('writes the file with mode 0600 in a folder of mode 0700, and leaves no temp file behind', async () => {
    const file = fresh();
    await new SettingsStore(file).save(defaultSettings());
    if (process.platform !== 'win32') {
      expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
      expect((await fs.stat(path.dirname(file))).mode & 0o777).toBe(0o700);
    }
    expect(await fs.readdir(path.dirname(file))).toEqual(['settings.json']);
  });

  it('never shows a reader a partial file while saving, and cleans up when the rename fails', async () => {
    const file = fresh();
    const store = new SettingsStore(file);
    const s = defaultSettings();
    await store.save(s);
    let reads = 0;
    let saving = true;
    const reader = (async () => {
      while (saving) {
        const text = await fs.readFile(file, 'utf8');
        expect(() => JSON.parse(text)).not.toThrow();
        reads++;
        await new Promise((r) => setImmediate(r));
      }
    })();
    for (let i = 0; i < 30; i++) {
      s.alerts.rules[0].threshold = i / 100;
      await store.save(s);
    }
    saving = false;
    await reader;
    expect(reads).toBeGreaterThan(0);

    // A settings.json that is a folder: the rename fails; the temp file must not stay behind.
    const odd = fresh();
    await fs.mkdir(odd, { recursive: true });
    await fs.writeFile(path.join(odd, 'keep'), 'x');
    const err = await new SettingsStore(odd).save(s).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeTruthy();
    expect(await fs.readdir(path.dirname(odd))).toEqual(['settings.json']);
  });

  it('reports broken JSON at path:line:column, and leaves the file byte for byte as it was', async () => {
    const file = fresh();
    const text = '{\n  "version": 1,\n  "ui": { "theme": "dark", }\n}\n';
    await write(file, text);
    const store = new SettingsStore(file);
    const l = store.loadSync();
    expect(l.ok).toBe(false);
    if (l.ok) return;
    expect(l.error.message).toBe(
      `${file}:3:28: not valid JSON (expected a property name in double quotes, found "}")`,
    );
    expect(l.error).toMatchObject({ line: 3, column: 28, file });
    expect(l.error.hint).toBe(UNUSABLE_HINT);
    expect(l.error.hint).toMatch(
      /runs on default settings and will not save over this file until you fix it or move it/,
    );

    const e = await refusal(store.save(defaultSettings()));
    expect(e.code).toBe('settings-not-saved');
    expect(e.message).toContain(`${file}:3:28`);
    expect(await fs.readFile(file, 'utf8')).toBe(text);
    expect(await fs.readdir(path.dirname(file))).toEqual(['settings.json']);
  });

  it('reports a value that does not validate at its line:column', async () => {
    const file = fresh();
    await write(file, '{\n  "version": 1,\n  "restart": {\n    "stackOrder": "random"\n  }\n}\n');
    const l = new SettingsStore(file).loadSync();
    expect(l.ok).toBe(false);
    if (l.ok) return;
    expect(l.error.message).toMatch(new RegExp(`^${escape(file)}:4:19: restart\\.stackOrder: `));
    await write(
      file,
      '{\n  "version": 1,\n  "alerts": { "rules": [ { "id": "x", "kind": "kv-high" } ] }\n}\n',
    );
    const m = new SettingsStore(file).loadSync();
    expect(m.ok || m.error.message).toMatch(/:3:26: alerts\.rules\[0\]\.enabled: /);
  });

  it('refuses a file from a newer PD Console, untouched', async () => {
    const file = fresh();
    const text = '{\n  "version": 2,\n  "futureThing": true\n}\n';
    await write(file, text);
    const store = new SettingsStore(file);
    const l = store.loadSync();
    expect(l.ok).toBe(false);
    if (l.ok) return;
    expect(l.error.code).toBe('config-newer');
    expect(l.error.message).toBe(
      `${file}:2:14: written by a newer PD Console (settings format version 2; this one reads up to 1)`,
    );
    expect(l.error.hint).toMatch(/^Update PD Console\. PD Console runs on default settings/);
    await refusal(store.save(defaultSettings()));
    expect(await fs.readFile(file, 'utf8')).toBe(text);
  });

  it('migrates a version-0 file (the in-memory shape), keeps the old file, and rewrites it as version 1', async () => {
    const file = fresh();
    const { readOnlyLocked: _l, ...restartV1 } = { ...defaultSettings().restart, readOnlyLocked: true };
    const v0 = {
      alertRules: DEFAULT_ALERT_RULES.map((r) => (r.id === 'decode-kv-high' ? { ...r, threshold: 0.8 } : r)),
      restartSettings: { ...restartV1, readOnly: false, readOnlyLocked: true, stackOrder: 'prefill-first' },
      recordingSettings: { enabled: false, maxTotalBytes: 32 * 1024 ** 2 },
      theme: 'light',
    };
    const text = JSON.stringify(v0, null, 2);
    await write(file, text);
    const store = new SettingsStore(file);
    const l = store.loadSync();
    expect(l.ok).toBe(true);
    if (!l.ok) return;
    expect(l.migratedFrom).toBe(0);
    expect(l.settings.alerts.rules.find((r) => r.id === 'decode-kv-high')?.threshold).toBe(0.8);
    expect(l.settings.restart.stackOrder).toBe('prefill-first');
    expect(l.settings.restart).not.toHaveProperty('readOnlyLocked');
    expect(l.settings.recording).toEqual({ enabled: false, maxTotalBytes: 32 * 1024 ** 2 });
    expect(l.settings.ui).toEqual({ theme: 'light', chartRange: '5m' });
    expect(migrate(v0, 0)).toMatchObject({ version: 1, ui: { theme: 'light' } });

    await store.save(l.settings);
    expect(await fs.readFile(`${file}.v0.bak`, 'utf8')).toBe(text);
    const after = new SettingsStore(file).loadSync();
    expect(after).toMatchObject({ ok: true, settings: l.settings });
    expect(after.ok && after.migratedFrom).toBeUndefined();
  });

  it('refuses a settings.json that is a FIFO or a device before reading it, and never saves over it', async () => {
    // Reading a FIFO nobody writes to waited for ever (startup hung); /dev/zero was read until memory ran out.
    const file = fresh();
    await fs.mkdir(path.dirname(file), { recursive: true });
    execFileSync('mkfifo', [file]);
    try {
      const l = await new SettingsStore(file).load();
      expect(l.ok || l.error.message).toBe(
        `${file} is a named pipe (FIFO); a settings file is a regular file of at most 1048576 bytes, so it is refused`,
      );
      const e = await refusal(new SettingsStore(file).save(defaultSettings()));
      expect(e.code).toBe('settings-not-saved');
      expect((await fs.lstat(file)).isFIFO()).toBe(true);
    } finally {
      // Lets go of a reader still blocked on it (the old behaviour), so a failure ends the test.
      try {
        closeSync(openSync(file, constants.O_WRONLY | constants.O_NONBLOCK));
      } catch {
        // ENXIO: nobody is waiting on it.
      }
    }
    // settings.json → /dev/zero, read at startup (the sync read).
    const zero = fresh();
    await fs.mkdir(path.dirname(zero), { recursive: true });
    await fs.symlink('/dev/zero', zero);
    const z = new SettingsStore(zero).loadSync();
    expect(z.ok || z.error.message).toBe(
      `${zero} is a character device; a settings file is a regular file of at most 1048576 bytes, so it is refused`,
    );
    expect(z.ok || z.error.hint).toBe('Check that the path points at the PD Console settings file.');
  });

  it('fills in what a hand-written file leaves out, and names an unknown key', async () => {
    const file = fresh();
    await write(file, '{ "version": 1, "ui": { "theme": "dark" } }');
    const l = new SettingsStore(file).loadSync();
    expect(l).toMatchObject({
      ok: true,
      settings: { ...defaultSettings(), ui: { theme: 'dark', chartRange: '5m' } },
    });
    await write(file, '{ "version": 1, "ui": { "theem": "dark" } }');
    const m = new SettingsStore(file).loadSync();
    expect(m.ok || m.error.message).toMatch(/:1:23: ui: Unrecognized key: "theem"/);
  });
});

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
