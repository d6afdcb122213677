// Runtime validation of request arguments on the receiving side (IPC in main, WebSocket in browser mode).
// The renderer is trusted code, but a compromised or buggy page must not be able to smuggle unexpected
// shapes into the core — e.g. a unit name with shell metacharacters.
import { z } from 'zod';
import type { RequestArgs, RequestName } from './contract';
import { ROLES } from './domain';

const id = z.string().min(1).max(200);
const role = z.enum(ROLES);

export const hostConfigSchema = z.strictObject({
  id: id.regex(/^[A-Za-z0-9._@:-]+$/),
  label: z.string().min(1).max(200),
  kind: z.enum(['demo', 'ssh']),
  alias: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[^\s'"`$;&|<>\\]+$/)
    .optional(),
  hostname: z
    .string()
    .min(1)
    .max(255)
    .regex(/^[A-Za-z0-9._:\-[\]]+$/)
    .optional(),
  port: z.number().int().min(1).max(65535).optional(),
  user: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[A-Za-z0-9._-]+$/)
    .optional(),
  identityFile: z.string().min(1).max(1024).optional(),
});

const empty = z.strictObject({});

export const requestSchemas = {
  getAppInfo: empty,
  listDeployments: empty,
  openDemo: z.strictObject({ speed: z.number().positive().max(10_000).optional() }),
  connectHost: z.strictObject({ host: hostConfigSchema }),
  closeDeployment: z.strictObject({ deploymentId: id }),
  getKvHistory: z.strictObject({
    deploymentId: id,
    role,
    fromMs: z.number().finite().optional(),
    maxPoints: z.number().int().min(2).max(200_000).optional(),
  }),
  listEvents: z.strictObject({ deploymentId: id }),
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
