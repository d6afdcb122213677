// The windowed rules' history (a role's failure counters and queues) is kept by slicing the points still in the
// window (it is in time order) instead of testing every point every poll: it must hold exactly what testing every
// point held, clock jumps back included. Here: the failure counter of each role, fed a value (or none) each poll.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  evaluateAlerts,
  historyPoints,
  initialAlertState,
  type AlertState,
} from '../../src/main/core/alerts/engine';
import { DEFAULT_ALERT_RULES } from '../../src/main/core/alerts/rules';
import type { Role } from '../../src/shared/domain';

const ROLES: Role[] = ['router', 'prefill', 'decode'];

/** One role's failure counter at a poll (scraped: the engine keeps a role's sums only from fresh scrapes). */
function fed(
  values: Record<string, number | null>,
  role: Role,
  n: number | null,
): Record<string, number | null> {
  values[`${role}.transfer_failed_total`] = n;
  values[`${role}.metrics_ok`] = 1;
  return values;
}
const T0 = 1_800_000_000_000;
// As evaluateAlerts works it out for the default rules: the longest window (600 s) plus 5 s.
const KEPT_MS =
  Math.max(600, ...DEFAULT_ALERT_RULES.map((r) => Math.max(r.windowS ?? 0, r.forS ?? 0))) * 1000 + 5000;

/** The history as the engine kept it before: every point tested against the window. */
function reference(
  prev: Record<string, Array<[number, number]>>,
  key: string,
  ts: number,
  v: number | null,
): Array<[number, number]> {
  const kept = (prev[key] ?? []).filter(([t]) => t >= ts - KEPT_MS && t < ts);
  if (v !== null) kept.push([ts, v]);
  return kept;
}

describe('alert history', () => {
  it('keeps exactly the points in the window, whatever the steps between polls (backwards too)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            // Mostly a second on, sometimes a long gap, sometimes back in time (a clock jump, a replay).
            step: fc.oneof(
              fc.constant(1000),
              fc.integer({ min: 1, max: 700_000 }),
              fc.integer({ min: -700_000, max: 0 }),
            ),
            failures: fc.option(fc.integer({ min: 0, max: 5 }), { nil: null }),
          }),
          { minLength: 1, maxLength: 120 },
        ),
        (steps) => {
          let state: AlertState = initialAlertState();
          let expected: Record<string, Array<[number, number]>> = {};
          let ts = T0;
          for (const { step, failures } of steps) {
            ts += step;
            const values: Record<string, number | null> = {};
            for (const r of ROLES) fed(values, r, failures);
            const next: Record<string, Array<[number, number]>> = { ...expected };
            for (const r of ROLES) next[`${r}.failures`] = reference(expected, `${r}.failures`, ts, failures);
            expected = next;
            state = evaluateAlerts(DEFAULT_ALERT_RULES, state, { ts, roles: ROLES, values }).state;
            for (const r of ROLES)
              expect(historyPoints(state.history[`${r}.failures`])).toEqual(expected[`${r}.failures`]);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('leaves the previous state’s history as it was', () => {
    const s1 = evaluateAlerts(DEFAULT_ALERT_RULES, initialAlertState(), {
      ts: T0,
      roles: ROLES,
      values: fed({}, 'decode', 1),
    }).state;
    const before = historyPoints(s1.history['decode.failures']);
    evaluateAlerts(DEFAULT_ALERT_RULES, s1, {
      ts: T0 + 1000,
      roles: ROLES,
      values: fed({}, 'decode', 2),
    });
    expect(historyPoints(s1.history['decode.failures'])).toEqual(before);
  });

  it('gives each step from the same earlier state its own history (a replay, two branches)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            // The state stepped from: the newest one mostly, sometimes one further back.
            back: fc.oneof(fc.constant(0), fc.constant(0), fc.integer({ min: 0, max: 5 })),
            step: fc.oneof(fc.constant(1000), fc.integer({ min: -5000, max: 300_000 })),
            failures: fc.option(fc.integer({ min: 0, max: 5 }), { nil: null }),
          }),
          { minLength: 1, maxLength: 80 },
        ),
        (steps) => {
          const states: { state: AlertState; ts: number; expected: Array<[number, number]> }[] = [
            { state: initialAlertState(), ts: T0, expected: [] },
          ];
          for (const { back, step, failures } of steps) {
            const from = states[Math.max(0, states.length - 1 - back)];
            const ts = from.ts + step;
            const state = evaluateAlerts(DEFAULT_ALERT_RULES, from.state, {
              ts,
              roles: ROLES,
              values: fed({}, 'decode', failures),
            }).state;
            const expected = reference({ k: from.expected }, 'k', ts, failures);
            states.push({ state, ts, expected });
            // Every state, the new one and all before it, still holds what it held when it was made.
            for (const s of states)
              expect(historyPoints(s.state.history['decode.failures'])).toEqual(s.expected);
          }
        },
      ),
      { numRuns: 100 },
    );
  });

  it('a poll adds its point without copying the window, and lets go of what left it', () => {
    let state = initialAlertState();
    let expected: Array<[number, number]> = [];
    const kept: { state: AlertState; expected: Array<[number, number]> }[] = [];
    const lists = new Set<unknown>();
    // An hour of polls, a second apart: the window (605 s) fills, then slides past the first points.
    for (let sec = 0; sec < 3600; sec++) {
      const ts = T0 + sec * 1000;
      const prev = state.history['decode.failures'];
      state = evaluateAlerts(DEFAULT_ALERT_RULES, state, {
        ts,
        roles: ROLES,
        values: fed({}, 'decode', sec % 7),
      }).state;
      expected = reference({ k: expected }, 'k', ts, sec % 7);
      const h = state.history['decode.failures'];
      lists.add(h.points);
      if (prev && h.points === prev.points) expect(h.points.length).toBe(h.hi);
      if (sec % 500 === 0) kept.push({ state, expected });
    }
    expect(historyPoints(state.history['decode.failures'])).toEqual(expected);
    // One list per ~1,000 points that fell out of the window, not one per poll; and none grew without bound.
    expect(lists.size).toBeLessThan(8);
    expect(state.history['decode.failures'].points.length).toBeLessThan(3 * 605);
    for (const k of kept) expect(historyPoints(k.state.history['decode.failures'])).toEqual(k.expected);
  });
});
