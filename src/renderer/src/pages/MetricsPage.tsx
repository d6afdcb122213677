// The panels an operator reads during an incident: latency quantiles, token throughput, router traffic
// and errors, cache hit rate, PD queues and KV transfer, and per-GPU readings grouped by role; above them, a
// quiet note of the metric families a service serves that this version does not understand.
import { signalKey, type ServerRole, type SignalKey } from '@shared/signals/spec';
import type { DeploymentView } from '../state/store';
import { TimeChart, type SeriesSpec } from '../charts/TimeChart';
import { UnknownFamiliesNote } from '../components/UnknownFamiliesNote';
import { GpusByHost } from '../workers/GpusByHost';
import { roleServices } from '../workers/fleet-model';
import { workerKey } from '../workers/keys';
import { PrometheusPanel } from '../prometheus/PrometheusPanel';

const Q = (role: ServerRole, base: 'ttft' | 'itl' | 'e2e', what: string): SeriesSpec[] => [
  { key: signalKey(role, `${base}_p50_s`), label: `${what} p50`, color: '--ok' },
  { key: signalKey(role, `${base}_p90_s`), label: `${what} p90`, color: '--warn' },
  { key: signalKey(role, `${base}_p99_s`), label: `${what} p99`, color: '--bad' },
];

const GPU_COLORS = ['--prefill', '--decode', '--router', '--accent', '--ok', '--warn', '--bad', '--muted'];

export function MetricsPage({ view }: { view: DeploymentView }): React.JSX.Element {
  const { deployment } = view.summary;
  const id = deployment.id;
  const ev = view.events;
  // A role of one service has its GPUs' charts here, as on a 1P1D box; every GPU of every host is in the tables
  // (a worker's own are on its page).
  const groups = (['prefill', 'decode', 'router'] as const).flatMap((role) => {
    const one = roleServices(view.summary, role).one;
    return one?.gpus?.length ? [{ role, hostId: one.hostId, gpus: one.gpus }] : [];
  });
  const src = (k: SignalKey): string | undefined => view.catalog?.[k]?.source;
  return (
    <div className="page metrics-page" data-testid="page-metrics">
      <UnknownFamiliesNote families={view.dashboard?.families} services={deployment.services} />
      <h2 className="section">Latency (decode: what clients see)</h2>
      <div className="chart-grid">
        <TimeChart
          id="ttft"
          title="Time to first token"
          deploymentId={id}
          series={Q('decode', 'ttft', 'TTFT')}
          unit="seconds"
          role="decode"
          events={ev}
          source={src('decode.ttft_p99_s')}
        />
        <TimeChart
          id="itl"
          title="Inter-token latency"
          deploymentId={id}
          series={Q('decode', 'itl', 'ITL')}
          unit="seconds"
          role="decode"
          events={ev}
          source={src('decode.itl_p99_s')}
        />
        <TimeChart
          id="e2e"
          title="End-to-end latency"
          deploymentId={id}
          series={Q('decode', 'e2e', 'E2E')}
          unit="seconds"
          role="decode"
          events={ev}
          source={src('decode.e2e_p99_s')}
        />
      </div>
      <h2 className="section">Throughput and traffic</h2>
      <div className="chart-grid">
        <TimeChart
          id="prompt-tps"
          title="Prompt tokens/s (prefill)"
          deploymentId={id}
          series={[
            { key: 'prefill.prompt_tokens_per_s', label: 'prompt tokens/s', color: '--prefill', fill: true },
          ]}
          unit="tokens_per_s"
          role="prefill"
          events={ev}
          source={src('prefill.prompt_tokens_per_s')}
        />
        <TimeChart
          id="gen-tps"
          title="Generation tokens/s (decode)"
          deploymentId={id}
          series={[
            {
              key: 'decode.generation_tokens_per_s',
              label: 'generation tokens/s',
              color: '--decode',
              fill: true,
            },
          ]}
          unit="tokens_per_s"
          role="decode"
          events={ev}
          source={src('decode.generation_tokens_per_s')}
        />
        <TimeChart
          id="router-rps"
          title="Router requests and errors"
          deploymentId={id}
          series={[
            { key: 'router.router_requests_per_s', label: 'requests/s', color: '--router' },
            { key: 'router.router_errors_per_s', label: '5xx/s', color: '--bad' },
          ]}
          unit="requests_per_s"
          role="router"
          events={ev}
          source={src('router.router_requests_per_s')}
        />
        <TimeChart
          id="cache-hit"
          title="Prefix cache hit rate"
          deploymentId={id}
          series={[
            // The counters give the real share of prompt tokens served from cache; the gauge is one batch's.
            {
              key: 'prefill.cache_hit_rate_window',
              label: 'prefill (60 s, from counters)',
              color: '--prefill',
            },
            {
              key: 'prefill.cache_hit_rate',
              label: 'prefill gauge (last prefill batch, zeroed at decode logs)',
              color: '--accent',
              dash: [4, 3],
            },
          ]}
          unit="ratio"
          yMin={0}
          yMax={1}
          role="prefill"
          events={ev}
          source={src('prefill.cache_hit_rate_window')}
        />
      </div>
      <h2 className="section">PD queues and KV transfer</h2>
      <div className="chart-grid">
        <TimeChart
          id="queues"
          title="Queued requests per stage"
          deploymentId={id}
          series={[
            { key: 'prefill.queued', label: 'prefill queued', color: '--prefill' },
            { key: 'prefill.prefill_bootstrap_queue', label: 'bootstrap', color: '--warn' },
            { key: 'prefill.prefill_inflight_queue', label: 'inflight', color: '--accent' },
            { key: 'decode.decode_prealloc_queue', label: 'decode prealloc', color: '--bad' },
            { key: 'decode.decode_transfer_queue', label: 'decode transfer', color: '--decode' },
          ]}
          unit="requests"
          events={ev}
        />
        <TimeChart
          id="kv-transfer"
          title="KV transfer rate"
          deploymentId={id}
          series={[{ key: 'prefill.kv_transfer_gb_s', label: 'prefill → decode', color: '--prefill' }]}
          unit="gb_per_s"
          events={ev}
          source={src('prefill.kv_transfer_gb_s')}
        />
        <TimeChart
          id="kv-transfer-latency"
          title="KV transfer latency (prefill side)"
          deploymentId={id}
          series={[
            { key: 'prefill.kv_transfer_latency_p50_ms', label: 'p50', color: '--prefill' },
            { key: 'prefill.kv_transfer_latency_p99_ms', label: 'p99', color: '--warn' },
          ]}
          unit="ms"
          events={ev}
        />
        <TimeChart
          id="transfer-failures"
          title="KV transfer failures"
          deploymentId={id}
          series={[
            { key: 'prefill.transfer_failed_per_min', label: 'prefill', color: '--prefill' },
            { key: 'decode.transfer_failed_per_min', label: 'decode', color: '--bad' },
          ]}
          unit="per_min"
          events={ev}
          source={src('decode.transfer_failed_per_min')}
        />
      </div>
      <h2 className="section">GPUs</h2>
      <GpusByHost view={view} />
      {groups.map(({ role, hostId, gpus }) => (
        <div key={role} data-testid={`gpu-group-${role}`}>
          <h3 className="subsection">
            {role} GPUs {gpus.join(', ')}
          </h3>
          <div className="chart-grid">
            {(
              [
                ['util', 'Utilization', 'percent'],
                ['mem_used', 'Memory used', 'bytes'],
                ['temp', 'Temperature', 'celsius'],
                ['power', 'Power', 'watts'],
              ] as const
            ).map(([field, title, unit]) => (
              <TimeChart
                key={field}
                id={`gpu-${role}-${field}`}
                title={`${title} (${role})`}
                deploymentId={id}
                series={gpus.map((g, i) => ({
                  // GPU readings are kept per host, as every host's are.
                  key: workerKey(`gpu.${g}.${field}`, hostId),
                  label: `GPU ${g}`,
                  color: GPU_COLORS[i % GPU_COLORS.length],
                }))}
                unit={unit}
                yMin={field === 'util' ? 0 : undefined}
                yMax={field === 'util' ? 100 : undefined}
                role={role}
                events={ev}
                height={150}
              />
            ))}
          </div>
        </div>
      ))}
      {view.summary.review === undefined && (
        <PrometheusPanel
          deploymentId={id}
          hosts={view.summary.hosts?.map((h) => h.host) ?? [view.summary.host]}
        />
      )}
    </div>
  );
}
