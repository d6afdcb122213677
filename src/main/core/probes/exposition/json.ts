// JSON rendering of a parsed exposition. JSON has no NaN or infinities, and both are ordinary sample values
// (NaN quantiles, +Inf bucket bounds are labels but ±Inf values occur too), so they become the strings the
// exposition formats themselves use: "NaN", "+Inf", "-Inf".

import type { Exposition } from './types';

function encodeNonFinite(_key: string, value: unknown): unknown {
  if (typeof value !== 'number' || Number.isFinite(value)) return value;
  if (Number.isNaN(value)) return 'NaN';
  return value > 0 ? '+Inf' : '-Inf';
}

export function expositionToJson(exposition: Exposition, indent?: number): string {
  return JSON.stringify(exposition, encodeNonFinite, indent);
}
