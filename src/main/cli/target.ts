// Which host a command answers for. The simulated demo host only when the operator asked for it (`--host demo`)
// or named no host at all, the simulated fleet only for `--host demo-fleet`, otherwise the host they named — and
// a simulated host says so in what the command prints (its label reads "(simulated)"; JSON has "simulated").
import type { App } from '../compose';
import type { DeploymentSummary, HostConfig } from '@shared/domain';
import { HOST_SPEC_HELP, parseHostSpec } from '@shared/host-spec';
import type { DemoEraOptions } from './demo-options';

export const DEMO_HOST = 'demo';

/** `--host`'s value, as every command that reaches a host declares it. */
export const HOST_OPTION = {
  type: 'string',
  needs: `a host: demo (simulated), an ssh alias or user@host[:port]`,
} as const;

/** "demo", or an ssh alias or user@host[:port] as a HostConfig. */
export function hostFromArg(arg: string): HostConfig {
  const host = parseHostSpec(arg);
  if (!host) throw new Error(`cannot read host ${JSON.stringify(arg)}: expected ${HOST_SPEC_HELP}`);
  return host;
}

/** `--host` as given (undefined: none) → the demo's name or the host's spec. */
export function hostArg(value: string | undefined): string {
  return value ?? DEMO_HOST;
}

/**
 * Opens the demo (in the eras asked for) or connects to the host, through the app as the desktop shell does: one
 * connection, one discovery; `addHosts` (--add-host) are hosts of its fleet no router URL leads to.
 */
export function openTarget(
  app: App,
  host: string | HostConfig,
  eras: DemoEraOptions = {},
  addHosts: HostConfig[] = [],
): Promise<DeploymentSummary> {
  if (host === DEMO_HOST) return app.handlers.openDemo(eras);
  return app.core.connectHost({ host: typeof host === 'string' ? hostFromArg(host) : host }, { addHosts });
}

/** True for the simulated host: the field `simulated` of every --json answer. */
export function isSimulated(host: HostConfig): boolean {
  return host.kind === 'demo';
}
