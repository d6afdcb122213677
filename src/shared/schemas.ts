// Runtime validation of request arguments on the receiving side (IPC in main, WebSocket in browser mode).
// The renderer is trusted code, but a compromised or buggy page must not be able to smuggle unexpected
// shapes into the core — e.g. a unit name with shell metacharacters. Each feature's schemas live in
// src/shared/schemas/<feature>.ts; this file joins them and proves every request has one.
import type { z } from 'zod';
import type { RequestArgs, RequestName } from './contract';
import { monitoringSchemas } from './schemas/monitoring';
import { restartSchemas } from './schemas/restart';
import { rollSchemas } from './schemas/roll';
import { dashboardSchemas } from './schemas/dashboard';
import { discoverySchemas } from './schemas/discovery';
import { recordingSchemas } from './schemas/recording';
import { hostsSchemas } from './schemas/hosts';
import { reviewSchemas } from './schemas/review';
import { settingsSchemas } from './schemas/settings';
import { historySchemas } from './schemas/history';
import { prometheusSchemas } from './schemas/prometheus';

export { hostConfigSchema } from './schemas/monitoring';

export const requestSchemas = {
  ...monitoringSchemas,
  ...restartSchemas,
  ...rollSchemas,
  ...dashboardSchemas,
  ...discoverySchemas,
  ...recordingSchemas,
  ...hostsSchemas,
  ...reviewSchemas,
  ...settingsSchemas,
  ...historySchemas,
  ...prometheusSchemas,
} satisfies { [K in RequestName]: z.ZodType<RequestArgs<K>> };

export class ArgumentError extends Error {
  readonly code = 'bad-arguments';
  constructor(method: string, detail: string) {
    super(`invalid arguments for ${method}: ${detail}`);
    this.name = 'ArgumentError';
  }
}

/** Validates `args` for `method`; throws ArgumentError naming the offending field. */
export function validateArgs<K extends RequestName>(method: K, args: unknown): RequestArgs<K> {
  const schema = requestSchemas[method] as z.ZodType<RequestArgs<K>>;
  const r = schema.safeParse(args ?? {});
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new ArgumentError(method, `${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  return r.data;
}

export function isRequestName(name: unknown): name is RequestName {
  return typeof name === 'string' && Object.prototype.hasOwnProperty.call(requestSchemas, name);
}
