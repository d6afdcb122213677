// What a connect attempt needs beyond ssh2's options: the resolver attaches it to the ConnectConfig it returns,
// so the connection can explain a refusal precisely (what was offered, what the host-key check decided) and
// release what the attempt opened besides the target connection (ProxyJump hops).
import type { ConnectConfig } from 'ssh2';
import type { ExplainedError } from './errors';
import type { SshOptions } from './ssh-options';

export interface ConnectDiagnostics {
  /** user@host:port (via jump hosts), for messages. */
  target: string;
  options: SshOptions;
  /** A specific explanation for an ssh2 error of this attempt, when there is one. */
  explain(err: Error): ExplainedError | undefined;
  /** Closes the attempt's jump hosts. Idempotent. */
  release(): void;
}

export type ResolvedConnectConfig = ConnectConfig & { diagnostics: ConnectDiagnostics };

export function hasDiagnostics(c: ConnectConfig): c is ResolvedConnectConfig {
  return typeof (c as Partial<ResolvedConnectConfig>).diagnostics?.explain === 'function';
}
