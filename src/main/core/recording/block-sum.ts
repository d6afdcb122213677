// Per-block integrity (format 1.1, docs/recording-format.md §1.1). gzip's own CRC-32 sits in the trailer, which a
// file that was never closed (crash, kill -9, still recording, copied mid-session) does not have; and deflate
// decodes many damaged bytes into other valid text — one flipped literal inside a back-reference renames a target
// in hundreds of lines. So the writer seals what it wrote since the previous seal with a `sum` record (CRC-32 and
// byte count of those decompressed bytes) at every flush and at least every SEAL_BYTES; the reader checks each
// block before it uses any record of it.
import { crc32 } from 'node:zlib';
import type { SumRecord } from './format';

/** Header field that says the file carries `sum` records. */
export const BLOCK_CHECKSUMS = 'crc32';
/** Every line of a sum record starts with these bytes (the writer's JSON key order). */
export const SUM_PREFIX = '{"k":"sum",';
/** The writer seals at least this often (uncompressed bytes), so a reader never holds more than this unchecked. */
export const SEAL_BYTES = 1024 * 1024;
/** A reader treats a block larger than this without a seal as damage. */
export const MAX_BLOCK_BYTES = 64 * 1024 * 1024;

/** Accumulates what the writer appends and emits the seal line. */
export class BlockSealer {
  private crc = 0;
  private bytes = 0;

  add(text: string | Buffer): void {
    this.crc = crc32(text, this.crc);
    this.bytes += Buffer.byteLength(text);
  }

  get pendingBytes(): number {
    return this.bytes;
  }

  /** The sum record line for everything added since the last seal; resets. Empty when nothing was added. */
  seal(t: number): string {
    if (this.bytes === 0) return '';
    const rec: SumRecord = { k: 'sum', t, b: this.bytes, c: this.crc >>> 0 };
    this.crc = 0;
    this.bytes = 0;
    return JSON.stringify(rec) + '\n';
  }
}

/** Checks blocks on the reading side: feed each block's bytes, then the sum line's text. */
export class BlockChecker {
  private crc = 0;
  private bytes = 0;

  add(buf: Buffer, start: number, end: number): void {
    if (end <= start) return;
    this.crc = crc32(buf.subarray(start, end), this.crc);
    this.bytes += end - start;
  }

  get pendingBytes(): number {
    return this.bytes;
  }

  /** Null when the block matches its seal; otherwise what is wrong, in words. Resets either way. */
  verify(sumLine: string): string | null {
    const crc = this.crc >>> 0;
    const bytes = this.bytes;
    this.crc = 0;
    this.bytes = 0;
    let r: unknown;
    try {
      r = JSON.parse(sumLine);
    } catch {
      return 'a block checksum record is not valid JSON';
    }
    const s = r as Partial<SumRecord>;
    if (typeof s.b !== 'number' || typeof s.c !== 'number') return 'a block checksum record is malformed';
    if (s.b !== bytes) return `a block holds ${bytes} bytes where its checksum record says ${s.b}`;
    if (s.c !== crc)
      return `a block's CRC-32 is ${crc.toString(16)} where its checksum record says ${s.c.toString(16)}`;
    return null;
  }
}
