// An error meant for the operator: it crosses IPC/WebSocket as { code, message, hint } (see ApiErrorShape).
import type { ApiErrorShape } from '@shared/contract';
import { ArgumentError } from '@shared/schemas';

export class ApiError extends Error implements ApiErrorShape {
  constructor(
    readonly code: string,
    message: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** Any thrown value → the shape sent to clients. Unknown errors keep their message; stacks stay in main. */
export function toApiErrorShape(err: unknown): ApiErrorShape {
  if (err instanceof ApiError) return { code: err.code, message: err.message, hint: err.hint };
  if (err instanceof ArgumentError) return { code: err.code, message: err.message };
  const e = err as { explained?: { code: string; message: string; hint?: string } };
  if (e && typeof e === 'object' && e.explained) return { ...e.explained };
  if (err instanceof Error) return { code: 'internal', message: err.message };
  return { code: 'internal', message: String(err) };
}
