// KV usage history for one role: % of capacity over time. History is loaded once; each observation
// then appends one point and calls update('none') — no re-render of the whole history.
import { useEffect, useRef, useState } from 'react';
import type { Role } from '@shared/domain';
import { api } from '../api/client';
import { errorText } from '../api/errors';
import { Chart } from './setup';

const MAX_LIVE_POINTS = 20_000;

interface Props {
  deploymentId: string;
  role: Role;
}

export function KvChart({ deploymentId, role }: Props): React.JSX.Element {
  const canvas = useRef<HTMLCanvasElement>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    const el = canvas.current;
    if (!el) return;
    const data: Array<{ x: number; y: number | null }> = [];
    const style = getComputedStyle(document.documentElement);
    const line = style.getPropertyValue(role === 'decode' ? '--decode' : '--prefill').trim() || '#3b82f6';
    const grid = style.getPropertyValue('--grid').trim() || 'rgba(128,128,128,0.2)';
    const text = style.getPropertyValue('--muted').trim() || '#888';
    const chart = new Chart(el, {
      type: 'line',
      data: {
        datasets: [
          {
            label: `${role} KV %`,
            data,
            borderColor: line,
            backgroundColor: line + '22',
            fill: 'origin',
            borderWidth: 1.5,
            pointRadius: 0,
            spanGaps: false,
            parsing: false,
            normalized: true,
          },
        ],
      },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        interaction: { mode: 'index', intersect: false },
        scales: {
          x: {
            type: 'time',
            grid: { color: grid },
            ticks: { color: text, maxRotation: 0, minRotation: 0, sampleSize: 4 },
          },
          y: {
            min: 0,
            max: 100,
            grid: { color: grid },
            ticks: { color: text, callback: (v) => `${v} %` },
          },
        },
        plugins: {
          legend: { display: false },
          tooltip: { callbacks: { label: (c) => `${(c.parsed.y ?? 0).toFixed(1)} %` } },
          decimation: { enabled: true, algorithm: 'min-max' },
        },
      },
    });
    let lastT = -Infinity;
    const push = (t: number, ratio: number | null): void => {
      if (t <= lastT) return;
      lastT = t;
      data.push({ x: t, y: ratio === null ? null : ratio * 100 });
      if (data.length > MAX_LIVE_POINTS) data.splice(0, data.length - MAX_LIVE_POINTS);
    };
    let disposed = false;
    const off = api.on('observation', (o) => {
      if (o.deploymentId !== deploymentId) return;
      const s = o.services.find((x) => x.role === role);
      if (!s) return;
      push(o.ts, s.kv ? s.kv.ratio : null);
      chart.update('none');
    });
    api
      .getKvHistory({ deploymentId, role, maxPoints: 4000 })
      .then((h) => {
        if (disposed) return;
        const live = data.splice(0);
        lastT = -Infinity;
        h.t.forEach((t, i) => push(t, h.ratio[i]));
        for (const p of live) push(p.x, p.y === null ? null : p.y / 100);
        chart.update('none');
      })
      .catch((err: unknown) => setError(errorText(err).message));
    return () => {
      disposed = true;
      off();
      chart.destroy();
    };
  }, [deploymentId, role]);

  return (
    <div className="chart-box">
      {error && <div className="chart-error">KV history unavailable: {error}</div>}
      <canvas ref={canvas} data-testid={`kv-chart-${role}`} aria-label={`${role} KV usage history`} />
    </div>
  );
}
