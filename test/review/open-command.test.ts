// `pd-console open FILE`: a recording summarised for a terminal — its span, series, events with times and
// what was lost, or where its overview or index is damaged — and clear failures for files that are not recordings.
import { copyFile, mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/main/cli/main';
import { scanMarked } from '../../src/main/core/recording/members';
import { writeSession, type WrittenSession } from './helpers';

let dir: string;
let session: WrittenSession;

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(args, {
    stdout: (s) => (out += s),
    stderr: (s) => (err += s),
    readStdin: async () => '',
  });
  return { code, out, err };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pdc-open-cli-'));
  session = await writeSession(dir, 5);
}, 60_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('pd-console open', () => {
  it('prints the session: host, span, series per target, every event with its time', async () => {
    const r = await cli(['open', session.path]);
    expect(r.code).toBe(0);
    expect(r.err).toBe('');
    expect(r.out).toContain('Demo PD on gpu-host-01');
    expect(r.out).toMatch(/host\s+gpu-host-01 \[demo\]/);
    expect(r.out).toMatch(/recorded\s+2026-01-05T08:00:00\.\d+Z → 2026-01-05T08:04:5\d\.\d+Z \(4m 5\ds\)/);
    expect(r.out).toMatch(
      /series\s+\d+ \(prefill@prefill-0 \d+ in \d+ families, decode@decode-0 \d+ in \d+ families, router@router/,
    );
    const crash = new Date(session.crashAt).toISOString();
    expect(r.out).toContain(`${crash}  alert        error   decode  decode exited: CUDA error`);
    expect(r.out).not.toContain('warnings:');
  });

  it('--json gives the same for scripts, with later notes from the sidecar', async () => {
    await writeFile(
      join(dir, `${session.id}.meta.json`),
      JSON.stringify({
        metaVersion: 1,
        name: 'decode crash',
        annotations: [{ id: 'note-1', ts: session.crashAt + 1000, text: 'OOM?', createdAt: 1 }],
      }),
    );
    const r = await cli(['open', session.path, '--json']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out) as {
      name: string;
      closedCleanly: boolean;
      series: { total: number; byTarget: Record<string, { series: number }> };
      events: { ts: number; kind: string; title: string }[];
      warnings: string[];
    };
    expect(j.name).toBe('decode crash');
    expect(j.closedCleanly).toBe(true);
    expect(Object.keys(j.series.byTarget).sort()).toEqual([
      'decode@decode-0',
      'prefill@prefill-0',
      'router@router',
    ]);
    expect(j.series.total).toBe(Object.values(j.series.byTarget).reduce((n, t) => n + t.series, 0));
    expect(j.events.find((e) => e.kind === 'alert')?.ts).toBe(session.crashAt);
    expect(j.events.find((e) => e.kind === 'annotation')).toMatchObject({
      title: 'OOM?',
      ts: session.crashAt + 1000,
    });
    expect(j.warnings).toEqual([]);
  });

  it('says what was lost in a file cut short, and refuses what is not a recording', async () => {
    const cut = join(dir, 'cut.pdrec.jsonl.gz');
    await copyFile(session.path, cut);
    await truncate(cut, 40_000);
    const r = await cli(['open', cut]);
    expect(r.code).toBe(0);
    expect(r.out).toContain('NOT closed properly');
    expect(r.out).toMatch(/warnings:\n {2}- The recording (was not closed|is damaged)/);

    const junk = join(dir, 'junk.txt');
    await writeFile(junk, 'hello');
    const bad = await cli(['open', junk]);
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('is not a PD Console recording');
    expect(bad.err).toContain('hint: recordings are .pdrec.jsonl.gz files');
    expect((await cli(['open'])).code).toBe(2);
    expect((await cli(['open', junk, '--bogus'])).code).toBe(2);
  });

  it('names where the overview is damaged, or that the index is missing, with all of the data there', async () => {
    const bytes = await readFile(session.path);
    const whole = JSON.parse((await cli(['open', session.path, '--json'])).out) as { scrapes: number };
    // Five minutes: the overview member written at close, then the index.
    const [overview, index] = scanMarked(bytes);
    expect([overview.kind, index.kind]).toEqual(['overview', 'index']);

    const damaged = join(dir, 'damaged-overview.pdrec.jsonl.gz');
    const copy = Buffer.from(bytes);
    copy[overview.at + 100] ^= 0xff;
    await writeFile(damaged, copy);
    const text = await cli(['open', damaged]);
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/^file\s+.*damaged-overview\.pdrec\.jsonl\.gz \(.+, complete\)$/m);
    expect(text.out).toContain(
      `warnings:\n  - The recording's overview at byte ${overview.at} (2026-01-05T08:`,
    );
    expect(text.out).toContain('the data is intact and all of it is shown');
    const j = JSON.parse((await cli(['open', damaged, '--json'])).out);
    expect(j.closedCleanly).toBe(true);
    expect(j.scrapes).toBe(whole.scrapes);
    expect(j.derivedDamage).toEqual([
      {
        section: 'overview',
        at: overview.at,
        span: [expect.any(Number), expect.any(Number)],
        what: expect.stringMatching(/^overview at byte \d+ \(.+\) is damaged \(.+\)$/),
      },
    ]);
    expect(j.warnings).toHaveLength(1);

    // A copy that stopped after the end record: complete data, but no overview of the last stretch and no index.
    const cut = join(dir, 'cut-after-close.pdrec.jsonl.gz');
    await writeFile(cut, bytes.subarray(0, overview.at));
    const c = JSON.parse((await cli(['open', cut, '--json'])).out);
    expect(c.closedCleanly).toBe(true);
    expect(c.scrapes).toBe(whole.scrapes);
    expect(c.derivedDamage).toEqual([expect.objectContaining({ section: 'index', at: overview.at })]);
    expect(c.warnings).toEqual([
      expect.stringMatching(
        /^The recording's index is missing: the file ends at byte \d+, after its end record, .*cut short after it was closed/,
      ),
    ]);
  });
});
