// An alert's timeline events are one episode, from its start to its end, whatever its text became in between:
// the charts draw it as one band (overlapping ones counted in one), a review knows what fired at any moment, and
// only the changes that need someone raise a toast or a desktop notification.
import { describe, expect, it } from 'vitest';
import type { AppEvent, AlertEventInfo } from '../../src/shared/domain';
import { chartMarks } from '../../src/renderer/src/charts/marker-groups';
import { alertsAt } from '../../src/main/core/review/state-at';
import { worthNotifying } from '../../src/shared/alert-notice';

let n = 0;
function change(
  ts: number,
  key: string,
  kind: AlertEventInfo['change'],
  title: string,
  over: Partial<AlertEventInfo> = {},
): AppEvent {
  return {
    id: String(++n),
    ts,
    kind: 'alert',
    severity: kind === 'fired' && over.notify !== false ? 'warning' : 'info',
    role: 'decode',
    title: kind === 'resolved' ? `resolved: ${title}` : title,
    alert: { key, ruleId: key.split('|')[0], change: kind, notify: true, ...over },
  };
}

describe('alert episodes', () => {
  it('on a chart: one band per episode, overlapping episodes one band with their count, others points', () => {
    const restart: AppEvent = { id: 'r', ts: 50, kind: 'action', severity: 'info', title: 'restart' };
    const { bands, points } = chartMarks([
      restart,
      change(100, 'kv|decode', 'fired', 'KV above 90 %'),
      change(150, 'kv|decode', 'updated', 'KV above 90 %: decode-1, decode-2'),
      change(200, 'stale|decode', 'fired', 'metrics stale'),
      change(300, 'stale|decode', 'resolved', 'metrics stale'),
      change(400, 'kv|decode', 'resolved', 'KV above 85 %'),
      change(600, 'inactive|decode', 'fired', 'decode not active', { notify: false, expected: 'restart' }),
    ]);
    expect(points).toEqual([restart]);
    expect(bands.map((b) => [b.from, b.to, b.count, b.severity, b.start.title])).toEqual([
      [100, 400, 2, 'warning', 'KV above 90 % (+1 more alert)'],
      // Still firing, and quiet (expected during a restart): drawn in the info colour.
      [600, null, 1, 'info', 'decode not active'],
    ]);
  });

  it('in a review: an alert edited while firing (its title changed) ends with its key, not its title', () => {
    const events = [
      change(100, 'decode-kv-high|decode', 'fired', 'decode KV cache above 90 %'),
      change(200, 'decode-kv-high|decode', 'updated', 'decode KV cache above 85 %'),
      change(300, 'decode-kv-high|decode', 'resolved', 'decode KV cache above 85 %'),
    ];
    expect(alertsAt(events, 250).map((a) => [a.key, a.title, a.since])).toEqual([
      ['decode-kv-high|decode', 'decode KV cache above 85 %', 100],
    ]);
    expect(alertsAt(events, 350)).toEqual([]);
  });

  it('notifies what needs someone: a notified start and its end, not a quiet start, end or change', () => {
    const heard = [
      change(1, 'a|decode', 'fired', 'A'),
      change(2, 'b|decode', 'fired', 'B expected', { notify: false, expected: 'restart of decode' }),
      change(3, 'a|decode', 'updated', 'A changed', { notify: false }),
      change(4, 'b|decode', 'ended', 'B ended', { notify: false }),
      change(5, 'a|decode', 'resolved', 'A'),
    ]
      .filter(worthNotifying)
      .map((e) => e.title);
    expect(heard).toEqual(['A', 'resolved: A']);
  });
});
