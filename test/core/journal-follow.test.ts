// The host's one journal follow and the unit tails it feeds, with the follow's channel and the host's answers
// written by the test: which unit each entry goes to (systemd's own -u rule), where a follow starts (a position
// read first, then after the last entry received, whatever restarts it), and the seams between a tail's backlog,
// the follow and readNow, where every entry must arrive exactly once and in journal order.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import type { JournalEntry } from '../../src/shared/contract';
import { acceleratedClock, systemClock } from '../../src/main/core/clock';
import { HostJournalFollow } from '../../src/main/core/journal/host-follow';
import type { FollowSink } from '../../src/main/core/journal/types';
import { UnitJournalTail } from '../../src/main/core/journal/unit-tail';
import { JOURNAL_FIELDS } from '../../src/main/core/journal/journal-json';
import type { CommandStream, ExecResult, StreamHandlers } from '../../src/main/core/ssh/connection';

const A = 'sglang-prefill.service';
const B = 'sglang-decode.service';

let seq = 0;
/** One `journalctl -o json` line; `fields` add to or override the service's own message fields. */
function line(message: string, fields: Record<string, string> = {}): { text: string; cursor: string } {
  const cursor = `s=ab;i=${(++seq).toString(16)};b=cd;m=1;t=2;x=3`;
  const o = {
    __CURSOR: cursor,
    __REALTIME_TIMESTAMP: String(1_764_000_000_000_000 + seq * 1000),
    PRIORITY: '6',
    _PID: '4242',
    _UID: '1000',
    MESSAGE: message,
    ...fields,
  };
  return { text: JSON.stringify(o), cursor };
}

interface Harness {
  follow: HostJournalFollow;
  /** The host's exec, as the follow and the tails share it. */
  exec: (command: string) => Promise<ExecResult>;
  execs: string[];
  follows: string[];
  /** The open follow channel's handlers. */
  live: () => StreamHandlers;
  newest: { text: string; cursor: string } | null;
}

/** The follow asks only for the fields the reader uses. */
const FIELDS = `--output-fields=${JOURNAL_FIELDS.join(',')}`;

function harness(
  answers: (command: string) => ExecResult | Promise<ExecResult> = () => ({
    stdout: '',
    stderr: '',
    exitCode: 0,
  }),
) {
  let handlers: StreamHandlers | null = null;
  const h: Harness = {
    execs: [],
    follows: [],
    live: () => handlers!,
    newest: null,
    follow: undefined as unknown as HostJournalFollow,
    exec: async (command) => {
      h.execs.push(command);
      if (command === 'journalctl --no-pager -o json --all -n 1')
        return { stdout: h.newest ? `${h.newest.text}\n` : '', stderr: '', exitCode: 0 };
      return answers(command);
    },
  };
  h.follow = new HostJournalFollow({
    label: 'gpu-1',
    exec: (command) => h.exec(command),
    open: async (command, hs): Promise<CommandStream> => {
      h.follows.push(command);
      handlers = hs;
      return { write: () => undefined, close: () => undefined };
    },
    isConnected: () => true,
    clock: acceleratedClock(50),
  });
  return h;
}

function sink(): FollowSink & { got: string[]; errors: string[] } {
  const s = {
    got: [] as string[],
    errors: [] as string[],
    entries: (es: JournalEntry[]) => void s.got.push(...es.map((e) => e.message)),
    failed: (e: Error) => void s.errors.push(e.message),
  };
  return s;
}

async function until(what: string, ok: () => boolean): Promise<void> {
  const end = Date.now() + 5000;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('HostJournalFollow', () => {
  it('reads a position, then runs one follow for all attached units after it, and routes each entry by systemd’s -u rule', async () => {
    const h = harness();
    h.newest = line('newest entry of the whole journal', { _SYSTEMD_UNIT: 'cron.service' });
    const a = sink();
    const b = sink();
    await Promise.all([h.follow.attach(A, a), h.follow.attach(B, b)]);
    await until('the follow', () => h.follows.length === 1);
    expect(h.execs).toEqual(['journalctl --no-pager -o json --all -n 1']);
    expect(h.follows[0]).toBe(
      `journalctl --no-pager -o json --all ${FIELDS} --follow -u ${A} -u ${B} --after-cursor '${h.newest.cursor}'`,
    );
    const text = [
      line('prefill says', { _SYSTEMD_UNIT: A }).text,
      '-- Boot 0123456789abcdef0123456789abcdef --',
      line(`Started ${B}.`, { _PID: '1', _UID: '0', _SYSTEMD_UNIT: 'init.scope', UNIT: B }).text,
      // UNIT= from anyone but PID 1 is not "about" the unit for journalctl -u.
      line('not about decode', { _SYSTEMD_UNIT: 'other.service', UNIT: B }).text,
      line('core dumped', {
        _UID: '0',
        _SYSTEMD_UNIT: 'systemd-coredump@0.service',
        MESSAGE_ID: 'fc2e22bc6ee647b6b90729ab34a250b1',
        COREDUMP_UNIT: B,
      }).text,
      line('décodé ✓', { _SYSTEMD_UNIT: B }).text,
    ].join('\n');
    // Cut anywhere, even inside a multi-byte character.
    const bytes = Buffer.from(`${text}\n`);
    for (let i = 0; i < bytes.length; i += 7) h.live().stdout(bytes.subarray(i, i + 7));
    expect(a.got).toEqual(['prefill says']);
    expect(b.got).toEqual([`Started ${B}.`, 'core dumped', 'décodé ✓']);
    expect(h.follow.stats.entries).toBe(5);
    h.follow.close();
  });

  it('a unit attached later restarts the follow after the last entry received; detaching the last forgets the position', async () => {
    const h = harness();
    h.newest = line('p');
    await h.follow.attach(A, sink());
    await until('the first follow', () => h.follows.length === 1);
    const last = line('heard', { _SYSTEMD_UNIT: A });
    h.live().stdout(Buffer.from(`${last.text}\n`));
    await h.follow.attach(B, sink());
    await until('the second follow', () => h.follows.length === 2);
    expect(h.follows[1]).toBe(
      `journalctl --no-pager -o json --all ${FIELDS} --follow -u ${A} -u ${B} --after-cursor '${last.cursor}'`,
    );
    h.follow.detach(B);
    await until('the third follow', () => h.follows.length === 3);
    expect(h.follows[2]).toBe(
      `journalctl --no-pager -o json --all ${FIELDS} --follow -u ${A} --after-cursor '${last.cursor}'`,
    );
    h.follow.detach(A);
    expect(h.follow.units).toEqual([]);
    // A later listener starts from the journal's end then, not from what was missed while nobody listened.
    h.newest = line('much later');
    await h.follow.attach(B, sink());
    await until('the fourth follow', () => h.follows.length === 4);
    expect(h.execs.filter((c) => c.endsWith('-n 1'))).toHaveLength(2);
    expect(h.follows[3]).toContain(`--after-cursor '${h.newest.cursor}'`);
    h.follow.close();
  });

  it('an empty journal is followed from its start; journalctl failing is told to every unit and retried from the cursor', async () => {
    const h = harness();
    h.newest = null;
    const a = sink();
    await h.follow.attach(A, a);
    await until('the follow', () => h.follows.length === 1);
    expect(h.follows[0]).toBe(`journalctl --no-pager -o json --all ${FIELDS} --follow -u ${A} --lines=all`);
    const first = line('first ever', { _SYSTEMD_UNIT: A });
    h.live().stdout(Buffer.from(`${first.text}\n`));
    h.live().stderr(Buffer.from('Failed to open journal: Permission denied\n'));
    h.live().closed(1, null);
    expect(a.errors).toEqual([
      'Failed to open journal: Permission denied (add the SSH user to the systemd-journal or adm group)',
    ]);
    await until('the retry', () => h.follows.length === 2);
    expect(h.follows[1]).toContain(`--after-cursor '${first.cursor}'`);
    h.follow.close();
  });
});

describe('a unit tail fed by the follow', () => {
  it('entries the follow brings while the backlog is read, and readNow, overlap at the seams: each arrives once, in order', async () => {
    let answerBacklog!: () => void;
    const h = harness((command) => {
      if (command.includes('--after-cursor'))
        return { stdout: catchUp.map((l) => l.text).join('\n') + '\n', stderr: '', exitCode: 0 };
      if (command.includes(' -n 1000'))
        // The backlog was read a little after the follow started: its newest entries came over the follow too.
        return new Promise<ExecResult>(
          (resolve) =>
            (answerBacklog = () =>
              resolve({ stdout: backlog.map((l) => l.text).join('\n') + '\n', stderr: '', exitCode: 0 })),
        );
      throw new Error(`unexpected ${command}`);
    });
    h.newest = line('p');
    const backlog = [1, 2, 3, 4].map((i) => line(`b${i}`, { _SYSTEMD_UNIT: A }));
    const catchUp: Array<{ text: string }> = [];
    const tail = new UnitJournalTail({
      unit: A,
      exec: (c) => h.exec(c),
      isConnected: () => true,
      clock: systemClock,
      feed: h.follow,
    });
    const live: string[] = [];
    const sub = tail.subscribe({ onLines: (ls) => live.push(...ls.map((l) => l.message)) });
    await until('the follow', () => h.follows.length === 1);
    // Before the backlog's answer is taken: b3 and b4 over the follow, then b5, which the backlog lacks.
    const b5 = line('b5', { _SYSTEMD_UNIT: A });
    h.live().stdout(Buffer.from([backlog[2].text, backlog[3].text, b5.text, ''].join('\n')));
    await until('the backlog read', () => answerBacklog !== undefined);
    answerBacklog();
    const got = await sub.backlog;
    expect(got.map((e) => e.message)).toEqual(['b1', 'b2', 'b3', 'b4', 'b5']);
    // readNow finds b6 and b7 after the last cursor; the follow then brings b6, b7 (again) and b8.
    const more = [6, 7, 8].map((i) => line(`b${i}`, { _SYSTEMD_UNIT: A }));
    catchUp.push(more[0], more[1]);
    await tail.readNow();
    h.live().stdout(Buffer.from(more.map((l) => l.text).join('\n') + '\n'));
    expect(live).toEqual(['b6', 'b7', 'b8']);
    expect(tail.latest(100).map((e) => e.message)).toEqual(['b1', 'b2', 'b3', 'b4', 'b5', 'b6', 'b7', 'b8']);
    // The command the journal view shows is the follow's.
    expect(tail.command).toBe(`journalctl --no-pager -o json --all --follow -u ${A}`);
    sub.dispose();
    expect(h.follow.units).toEqual([]);
    h.follow.close();
  });

  it('a journalctl that refuses --output-fields (systemd < 236) is followed with every field, without a failure told', async () => {
    const h = harness();
    h.newest = null;
    const a = sink();
    await h.follow.attach(A, a);
    await until('the follow', () => h.follows.length === 1);
    expect(h.follows[0]).toContain(FIELDS);
    h.live().stderr(Buffer.from(`journalctl: unrecognized option '${FIELDS}'\n`));
    h.live().closed(1, null);
    await until('the follow again', () => h.follows.length === 2);
    expect(h.follows[1]).toBe(`journalctl --no-pager -o json --all --follow -u ${A} --lines=all`);
    expect(a.errors).toEqual([]);
    const e = line('old host', { _SYSTEMD_UNIT: A });
    h.live().stdout(Buffer.from(`${e.text}\n`));
    expect(a.got).toEqual(['old host']);
    h.follow.close();
  });
});

describe("a unit tail's backlog", () => {
  const polled = (lines: { text: string }[]) =>
    new UnitJournalTail({
      unit: A,
      exec: async () => ({ stdout: lines.map((l) => l.text).join('\n') + '\n', stderr: '', exitCode: 0 }),
      isConnected: () => true,
      clock: acceleratedClock(50),
    });

  it('is read once: a second read says so instead of handing out an old backlog again', async () => {
    const tail = polled([line('one'), line('two')]);
    const sub = tail.subscribe({ onLines: () => undefined });
    expect((await sub.backlog).map((l) => l.message)).toEqual(['one', 'two']);
    await expect(sub.backlog).rejects.toThrow(`the backlog of ${A} was read already`);
    sub.dispose();
    tail.close();
  });

  it('is let go once read, while the subscription lives on (a recorder holds its own for the whole session)', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const tail = polled(Array.from({ length: 200 }, (_, i) => line(`l${i}`)));
    const sub = tail.subscribe({ onLines: () => undefined });
    let read: WeakRef<JournalEntry[]> | null = null;
    await (async () => {
      read = new WeakRef(await sub.backlog);
    })();
    await new Promise((r) => setTimeout(r, 0));
    gc();
    // The array handed out is garbage: neither the subscription nor the tail's listener record keeps it.
    expect(read!.deref()).toBeUndefined();
    expect(tail.listeners).toBe(1);
    sub.dispose();
    tail.close();
  });
});
