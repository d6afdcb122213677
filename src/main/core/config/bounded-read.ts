// Reading a small file the operator points at (settings, hosts, an import) without trusting what the path is.
// The file is opened first and judged on the open descriptor (fstat), so what is read is what was judged: a FIFO,
// a device (/dev/zero) or a directory is refused before a byte is read, and so is a regular file over the cap.
// The read itself stops at the cap, so a file that grows after the fstat costs at most cap + 1 bytes.
// O_NONBLOCK makes opening a FIFO return at once instead of waiting, forever, for a writer.
import { closeSync, constants, fstatSync, openSync, promises as fs, readSync, type Stats } from 'node:fs';

/** Why a file was refused, as a fact about it; callers add what the file should be and what to do. */
export class BoundedReadError extends Error {
  constructor(
    readonly reason: 'not-a-file' | 'too-large',
    readonly file: string,
    message: string,
  ) {
    super(message);
    this.name = 'BoundedReadError';
  }
}

// Windows has no O_NONBLOCK (and no FIFOs at a path): 0 leaves the flag out there.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);
/** First read size when the file's own size is no guide (it changed, or a size of 0). */
const FIRST_CHUNK = 64 * 1024;

/** The bytes of regular file `file`, at most `maxBytes` of them; errors from open() (ENOENT…) pass through. */
export async function readBoundedFile(file: string, maxBytes: number): Promise<Buffer> {
  const fh = await fs.open(file, OPEN_FLAGS);
  try {
    const st = await fh.stat();
    judge(file, st, maxBytes);
    const into = new Growing(file, maxBytes, st.size);
    for (;;) {
      const { bytesRead } = await fh.read(into.buf, into.len, into.room(), into.len);
      if (!into.took(bytesRead)) return into.bytes();
    }
  } finally {
    await fh.close();
  }
}

/** Same as readBoundedFile, for the reads a shell does before anything else runs (startup). */
export function readBoundedFileSync(file: string, maxBytes: number): Buffer {
  const fd = openSync(file, OPEN_FLAGS);
  try {
    const st = fstatSync(fd);
    judge(file, st, maxBytes);
    const into = new Growing(file, maxBytes, st.size);
    for (;;) {
      const n = readSync(fd, into.buf, into.len, into.room(), into.len);
      if (!into.took(n)) return into.bytes();
    }
  } finally {
    closeSync(fd);
  }
}

function judge(file: string, st: Stats, maxBytes: number): void {
  if (!st.isFile()) throw new BoundedReadError('not-a-file', file, `${file} is ${kindOf(st)}`);
  if (st.size > maxBytes) throw new BoundedReadError('too-large', file, `${file} is ${st.size} bytes`);
}

function kindOf(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a named pipe (FIFO)';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

/**
 * One buffer filled until end of file, grown up to maxBytes + 1 bytes: the extra byte tells a file that grew
 * past the cap after the fstat from one that ends exactly at it.
 */
class Growing {
  buf: Buffer;
  len = 0;
  private readonly limit: number;

  constructor(
    private readonly file: string,
    private readonly maxBytes: number,
    sizeHint: number,
  ) {
    this.limit = maxBytes + 1;
    this.buf = Buffer.allocUnsafe(Math.min(this.limit, Math.max(sizeHint + 1, FIRST_CHUNK)));
  }

  room(): number {
    return this.buf.length - this.len;
  }

  /** Counts `n` bytes read; false when the read is over (end of file, or past the cap). */
  took(n: number): boolean {
    this.len += n;
    if (n === 0 || this.len >= this.limit) return false;
    if (this.len === this.buf.length) {
      const bigger = Buffer.allocUnsafe(Math.min(this.limit, this.buf.length * 2));
      this.buf.copy(bigger, 0, 0, this.len);
      this.buf = bigger;
    }
    return true;
  }

  bytes(): Buffer {
    if (this.len > this.maxBytes)
      throw new BoundedReadError(
        'too-large',
        this.file,
        `${this.file} grew past ${this.maxBytes} bytes while it was read`,
      );
    return this.buf.subarray(0, this.len);
  }
}
