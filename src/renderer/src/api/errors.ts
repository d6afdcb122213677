/** An API failure as the renderer sees it: what happened, and what to do (hint). */
export class ApiCallError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'ApiCallError';
  }
}

export function errorText(err: unknown): { message: string; hint?: string } {
  if (err && typeof err === 'object' && 'message' in err) {
    const e = err as { message: string; hint?: string };
    return { message: e.message, hint: e.hint };
  }
  return { message: String(err) };
}
