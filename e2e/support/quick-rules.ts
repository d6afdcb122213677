// The demo's alert rules with holds of seconds instead of minutes, for specs that watch alerts fire and clear.
import { apiCall } from './api';

interface AlertRuleLike {
  kind: string;
  [k: string]: unknown;
}

/**
 * The default alert rules with holds of seconds, so a scenario needs seconds, not minutes; `overrides` (by rule
 * kind) adds what one spec needs on top.
 */
export async function quickRules(
  url: string,
  overrides: Record<string, Record<string, unknown>> = {},
): Promise<void> {
  const quick: Record<string, Record<string, unknown>> = {
    'kv-high': { forS: 2, clearForS: 5 },
    'metrics-stale': { forS: 5, clearForS: 3 },
    'service-inactive': { forS: 2, clearForS: 3 },
    // Longer than the monitor's health period (5 polls): a check from before a restart's end is read again
    // until the next one.
    'health-failing': { forS: 8, clearForS: 3 },
  };
  const rules = await apiCall<AlertRuleLike[]>(url, 'getAlertRules', {});
  await apiCall(url, 'setAlertRules', {
    rules: rules.map((r) => ({ ...r, ...quick[r.kind], ...overrides[r.kind] })),
  });
}

/**
 * A crash loop at real speed restarts about once a minute (the model loads between crashes): two restarts make a
 * loop, and the window outlasts a spec's scenarios, so the alert of the first is still there for the last.
 */
export const RESTART_LOOP_AT_REAL_SPEED = { 'restart-loop': { threshold: 2, windowS: 1800 } };
