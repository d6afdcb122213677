// What running a command over a host's SSH link takes and gives: its result, its limits, and a long-lived
// command's stream. Apart from the connection so the persistent shell that runs commands for it shares them.

export interface ExecResult {
  stdout: string;
  stderr: string;
  exitCode: number | null;
  signal?: string;
}

export interface ExecOptions {
  /** Real-time limit; the command's channel is closed when it passes. */
  timeoutMs?: number;
  /** Output cap per stream; past it the channel is closed and the call fails. */
  maxBytes?: number;
}

/** Where a long-lived command's output goes (see `openStream`). */
export interface StreamHandlers {
  stdout(chunk: Buffer): void;
  stderr(chunk: Buffer): void;
  /** The channel is gone: the command exited (its code or signal) or the link dropped (both null). */
  closed(exitCode: number | null, signal: string | null): void;
}

/** A command that keeps running on its own channel: a persistent shell, a journal follow. */
export interface CommandStream {
  /** To the command's stdin. */
  write(data: string): void;
  /** Ends the command (TERM where the server honours signal requests) and closes its channel. */
  close(): void;
}
