// The CLI's streams, apart from main.ts so that every verb's module can take them without importing the
// dispatcher that imports it.
export interface CliIo {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  /** Bytes, so that `parse` can tell invalid UTF-8 from U+FFFD. */
  readStdin: () => Promise<string | Uint8Array>;
}
