// A small file the operator points at is judged on the open descriptor before a byte is read: a FIFO (which
// would block the read until a writer comes, forever), a device (/dev/zero never ends), a directory and a file
// over the cap are refused at once; a file up to the cap is read whole, by both the async and the sync reader.
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  BoundedReadError,
  readBoundedFile,
  readBoundedFileSync,
} from '../../src/main/core/config/bounded-read';

const dir = mkdtempSync(join(tmpdir(), 'pdc-bounded-read-'));
let n = 0;
const path = (): string => join(dir, `f${++n}`);

/** A FIFO with nobody writing to it; anyone left waiting on it is let go after the test. */
const fifos: string[] = [];
function fifo(): string {
  const p = path();
  execFileSync('mkfifo', [p]);
  fifos.push(p);
  return p;
}
afterEach(() => {
  for (const p of fifos.splice(0)) {
    // A reader blocked in open() (the behaviour this file guards against) is released by a writer that closes.
    try {
      closeSync(openSync(p, constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      // ENXIO: no reader is waiting, which is what a passing test leaves.
    }
  }
});

const readers = {
  async: (f: string, max: number): Promise<Buffer> => readBoundedFile(f, max),
  sync: (f: string, max: number): Promise<Buffer> =>
    Promise.resolve().then(() => readBoundedFileSync(f, max)),
};

async function refusal(p: Promise<unknown>): Promise<BoundedReadError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(BoundedReadError);
  return err as BoundedReadError;
}

describe.each(Object.entries(readers))('readBoundedFile (%s)', (_name, read) => {
  it('reads a regular file whole, up to exactly the cap', async () => {
    const f = path();
    writeFileSync(f, 'x'.repeat(100_000));
    expect((await read(f, 100_000)).toString()).toBe('x'.repeat(100_000));
    const empty = path();
    writeFileSync(empty, '');
    expect((await read(empty, 10)).length).toBe(0);
  });

  it('refuses a file over the cap by its size, naming the file and the size', async () => {
    const f = path();
    writeFileSync(f, '{"version":1}');
    truncateSync(f, 100 * 1024 * 1024);
    const e = await refusal(read(f, 1024 * 1024));
    expect(e.reason).toBe('too-large');
    expect(e.message).toBe(`${f} is ${100 * 1024 * 1024} bytes`);
  });

  it('refuses a FIFO nobody writes to at once, instead of waiting for a writer', async () => {
    const f = fifo();
    const e = await refusal(read(f, 1024));
    expect(e).toMatchObject({ reason: 'not-a-file', message: `${f} is a named pipe (FIFO)` });
  });

  it('refuses /dev/zero and a directory without reading them', async () => {
    expect(await refusal(read('/dev/zero', 1024))).toMatchObject({
      reason: 'not-a-file',
      message: '/dev/zero is a character device',
    });
    expect((await refusal(read(dir, 1024))).message).toBe(`${dir} is a directory`);
  });

  it('reads to end of file, not to the size fstat gave, and stops one byte past the cap', async () => {
    // /proc files say size 0 and hold more: the same case as a file that grew after the fstat.
    const status = (await read('/proc/self/status', 1024 * 1024)).toString();
    expect(status).toMatch(/^Name:\s/);
    expect(status).toContain('\nVmRSS:');
    const e = await refusal(read('/proc/self/status', 100));
    expect(e).toMatchObject({
      reason: 'too-large',
      message: '/proc/self/status grew past 100 bytes while it was read',
    });
  });

  it('passes open() errors through (a missing file stays ENOENT)', async () => {
    await expect(read(join(dir, 'missing'), 10)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
