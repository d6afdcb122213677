// The markers a chart draws are the events of its own roles and workers: the prefill KV chart does not mark
// decode's restarts and alerts, a fleet worker's chart does not mark the other workers' state changes, and
// what concerns the whole deployment (the connection, a restart of everything) is on every chart.
import { describe, expect, it } from 'vitest';
import type { AppEvent } from '../../src/shared/domain';
import { chartScope, eventsForChart } from '../../src/renderer/src/charts/chart-events';

let n = 0;
const ev = (over: Partial<AppEvent>): AppEvent => ({
  id: String(++n),
  ts: n,
  kind: 'state-change',
  severity: 'warning',
  title: over.title ?? `e${n}`,
  ...over,
});

const connection = ev({ kind: 'connection', title: 'connection lost' });
const decodeAlert = ev({ kind: 'alert', role: 'decode', title: 'decode KV ≥ 90 %' });
const prefillRestart = ev({ kind: 'restart-step', role: 'prefill', title: 'prefill restart: stop' });
const decode3 = ev({ role: 'decode', worker: 'decode-3', title: 'decode-3: failed' });
const decode12 = ev({ role: 'decode', worker: 'decode-12', title: 'decode-12: failed' });
const prefill1 = ev({ role: 'prefill', worker: 'prefill-1', title: 'prefill-1: failed' });
const all = [connection, decodeAlert, prefillRestart, decode3, decode12, prefill1];
const titles = (keys: string[], role?: AppEvent['role']): string[] =>
  eventsForChart(all, chartScope(keys, role)).map((e) => e.title);

describe('eventsForChart', () => {
  it("marks on a one-host pair's prefill KV chart no event of decode", () => {
    expect(titles(['prefill.kv_ratio'], 'prefill')).toEqual([
      'connection lost',
      'prefill restart: stop',
      'prefill-1: failed',
    ]);
    expect(titles(['decode.kv_used', 'decode.kv_evictable', 'decode.kv_capacity'], 'decode')).toEqual([
      'connection lost',
      'decode KV ≥ 90 %',
      'decode-3: failed',
      'decode-12: failed',
    ]);
  });

  it("marks on a fleet's worker chart that worker's events and its role's, not the other workers'", () => {
    const group = ['decode.kv_ratio@decode-1', 'decode.kv_ratio@decode-3', 'decode.kv_ratio'];
    expect(titles(group, 'decode')).toEqual(['connection lost', 'decode KV ≥ 90 %', 'decode-3: failed']);
    expect(titles(['decode.running@decode-12', 'decode.queued@decode-12'], 'decode')).toEqual([
      'connection lost',
      'decode KV ≥ 90 %',
      'decode-12: failed',
    ]);
    expect(titles(['prefill.kv_ratio@prefill-2', 'prefill.kv_ratio'], 'prefill')).toEqual([
      'connection lost',
      'prefill restart: stop',
    ]);
  });

  it('marks on a chart of both roles both roles, and on a chart of no role (GPUs) every event', () => {
    expect(titles(['prefill.ttft_p99', 'decode.itl_p99'])).toHaveLength(all.length);
    expect(titles(['gpu.0.util', 'gpu.1.util'])).toHaveLength(all.length);
    // A chart whose keys name no role takes the role it was given.
    expect(titles(['gpu.0.util'], 'router')).toEqual(['connection lost']);
  });
});
