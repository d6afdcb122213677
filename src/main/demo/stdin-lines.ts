// A channel's stdin as lines, for an emulated command that reads it (a shell reading commands over a pipe).
// Bounded: past MAX_BUFFERED characters not yet read, further input is dropped, as a pipe nobody drains would
// stall the writer instead of growing without end.
import type { LineSource } from './commands/context';

const MAX_BUFFERED = 1024 * 1024;

export class StdinLines implements LineSource {
  private partial = '';
  private readonly lines: string[] = [];
  private buffered = 0;
  private ended = false;
  private waiter: ((line: string | null) => void) | null = null;

  constructor(private readonly onLine?: (line: string) => void) {}

  push(chunk: Buffer | string): void {
    if (this.ended) return;
    const text = this.partial + chunk.toString();
    const parts = text.split('\n');
    this.partial = parts.pop() ?? '';
    for (const line of parts) this.deliver(line);
    if (this.partial.length > MAX_BUFFERED) this.partial = '';
  }

  /** End of input: a line without its newline still counts, as in a shell. */
  end(): void {
    if (this.ended) return;
    if (this.partial) this.deliver(this.partial);
    this.partial = '';
    this.ended = true;
    this.wake(null);
  }

  next(): Promise<string | null> {
    const line = this.lines.shift();
    if (line !== undefined) {
      this.buffered -= line.length;
      return Promise.resolve(line);
    }
    if (this.ended) return Promise.resolve(null);
    return new Promise((resolve) => (this.waiter = resolve));
  }

  private deliver(line: string): void {
    this.onLine?.(line);
    if (this.waiter) return this.wake(line);
    if (this.buffered + line.length > MAX_BUFFERED) return;
    this.lines.push(line);
    this.buffered += line.length;
  }

  private wake(line: string | null): void {
    const w = this.waiter;
    this.waiter = null;
    w?.(line);
  }
}
