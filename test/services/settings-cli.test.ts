// `pd-console settings`: show what is in effect, export a copy, import a shared copy only after showing what it
// changes (and only with --yes), and refuse a broken settings file with its path:line:column. A file to import is
// judged before it is read: over 1 MiB, a FIFO or a device is refused at once, with what it is and what to do.
import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync, promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { settingsCommand } from '../../src/main/cli/settings-command';

async function run(dataDir: string, ...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await settingsCommand(
    argv,
    { stdout: (s) => (out += s), stderr: (s) => (err += s) },
    { dataDir },
  );
  return { code, out, err };
}

describe('pd-console settings', () => {
  it('shows, exports and imports (preview first, then --yes keeps settings.json.bak)', async () => {
    const dir = await fs.mkdtemp(join(tmpdir(), 'pdc-settings-cli-'));
    const show = await run(dir, 'show');
    expect(show.code).toBe(0);
    expect(show.out).toContain(`settings file: ${join(dir, 'settings.json')}\n`);
    expect(show.out).toContain('  on  decode-kv-high (warning, threshold 0.9, for 30 s)\n');

    const shared = join(dir, 'team.json');
    expect((await run(dir, 'export', shared)).code).toBe(0);
    // export never replaces a file that is already there
    expect((await run(dir, 'export', shared)).err).toMatch(/cannot write .*team\.json: EEXIST/);
    const doc = JSON.parse(await fs.readFile(shared, 'utf8'));
    doc.alerts.rules[0].threshold = 0.5;
    doc.ui.theme = 'dark';
    await fs.writeFile(shared, JSON.stringify(doc));

    const preview = await run(dir, 'import', shared);
    expect(preview.code).toBe(0);
    expect(preview.out).toBe(
      `${shared} would change 2 setting(s):\n` +
        '  alerts.rules[decode-kv-high].threshold: 0.9 → 0.5\n' +
        '  ui.theme: "system" → "dark"\n' +
        'Nothing changed yet: run again with --yes to import.\n',
    );
    await expect(fs.access(join(dir, 'settings.json'))).rejects.toThrow();

    await fs.writeFile(join(dir, 'settings.json'), '{ "version": 1 }\n');
    const done = await run(dir, 'import', shared, '--yes');
    expect(done.out).toContain(`The previous file is kept as ${join(dir, 'settings.json.bak')}.`);
    expect(await fs.readFile(join(dir, 'settings.json.bak'), 'utf8')).toBe('{ "version": 1 }\n');
    expect((await run(dir, 'show')).out).toContain('decode-kv-high (warning, threshold 0.5, for 30 s)');
  });

  it('reports a broken settings file at path:line:column, exits 1 and leaves it alone', async () => {
    const dir = await fs.mkdtemp(join(tmpdir(), 'pdc-settings-cli-'));
    const file = join(dir, 'settings.json');
    await fs.writeFile(file, '{\n  "version": 1,\n  "ui": { "theme": "purple" }\n}\n');
    const r = await run(dir, 'show');
    expect(r.code).toBe(1);
    expect(r.err).toContain(`${file}:3:20: ui.theme: `);
    expect(r.err).toContain('hint: PD Console runs on default settings and will not save over this file');
    const imp = await run(dir, 'import', file, '--yes');
    expect(imp.code).toBe(1);
    expect(imp.err).toMatch(/^pd-console settings: the imported file:3:20: ui\.theme: /);
    expect(await fs.readFile(file, 'utf8')).toBe('{\n  "version": 1,\n  "ui": { "theme": "purple" }\n}\n');
    expect((await run(dir, 'frobnicate')).code).toBe(2);
  });

  it('choose saves the unit discovery uses for a role on a host; --clear forgets it', async () => {
    const dir = await fs.mkdtemp(join(tmpdir(), 'pdc-settings-cli-'));
    const r = await run(dir, 'choose', 'gpu1', 'decode', 'dsv4-old-decode.service');
    expect(r).toMatchObject({
      code: 0,
      out: 'on gpu1, decode is dsv4-old-decode.service from the next connect on\n',
    });
    expect((await run(dir, 'show')).out).toContain('discovery: on gpu1, decode is dsv4-old-decode.service\n');
    const bad = await run(dir, 'choose', 'gpu1', 'decode', 'x;rm -rf /');
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/unit: a systemd unit name/);
    expect((await run(dir, 'choose', 'gpu1', 'decode', '--clear')).code).toBe(0);
    expect((await run(dir, 'show')).out).not.toContain('discovery:');
  });

  it('refuses an import over 1 MiB, a FIFO and /dev/zero before reading them', async () => {
    const dir = await fs.mkdtemp(join(tmpdir(), 'pdc-settings-cli-'));
    // Valid JSON followed by 100 MB of NULs (a sparse file): read whole, it failed only at the parse.
    const big = join(dir, 'big.json');
    await fs.writeFile(big, '{"version":1}');
    await fs.truncate(big, 100 * 1024 * 1024);
    const r = await run(dir, 'import', big, '--yes');
    expect(r).toMatchObject({ code: 1, out: '' });
    expect(r.err).toBe(
      `pd-console settings: ${big} is ${100 * 1024 * 1024} bytes; a settings file is a regular file of at most ` +
        '1048576 bytes, so it is refused\nhint: Check that the path points at the PD Console settings file.\n',
    );
    // A FIFO nobody writes to: reading it waited for a writer for ever.
    const pipe = join(dir, 'pipe.json');
    execFileSync('mkfifo', [pipe]);
    try {
      const p = await run(dir, 'import', pipe);
      expect(p.code).toBe(1);
      expect(p.err).toContain(`${pipe} is a named pipe (FIFO); a settings file is a regular file`);
    } finally {
      // Lets go of a reader still blocked on it (what the command did before), so a failure ends the test.
      try {
        closeSync(openSync(pipe, constants.O_WRONLY | constants.O_NONBLOCK));
      } catch {
        // ENXIO: nobody is waiting on it.
      }
    }
    // /dev/zero never ends: read whole, it took 3 s and 690 MB before failing with "Invalid string length".
    const zero = await run(dir, 'import', '/dev/zero');
    expect(zero.code).toBe(1);
    expect(zero.err).toContain('/dev/zero is a character device; a settings file is a regular file');
    await expect(fs.access(join(dir, 'settings.json'))).rejects.toThrow();
  });
});
