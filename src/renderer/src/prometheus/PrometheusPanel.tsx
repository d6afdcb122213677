// The operator's Prometheus on screen: which one was found (or "none found — here is the config"), per endpoint
// whether it is scraped and as which job/instance at which interval, the retention, the lines to add for what
// it misses, a URL of one's own (direct or through a host's tunnel, with basic auth or a token, and for https the
// CA file of a private CA), and the two exports — prometheus.yml and the Grafana dashboard — to save or copy.
import { useCallback, useEffect, useState } from 'react';
import type { ExportedFile, PrometheusStatus } from '@shared/contract';
import type { HostConfig } from '@shared/domain';
import { api } from '../api/client';
import { errorText } from '../api/errors';
import './prometheus.css';

type Err = { message: string; hint?: string } | null;

function save(file: ExportedFile): void {
  const url = URL.createObjectURL(new Blob([file.text], { type: file.mimeType }));
  const a = document.createElement('a');
  a.href = url;
  a.download = file.fileName;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

async function copy(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

function duration(s: number): string {
  if (s % 86400 === 0) return `${s / 86400} d`;
  if (s % 3600 === 0) return `${s / 3600} h`;
  return `${s} s`;
}

export function PrometheusPanel({
  deploymentId,
  hosts,
}: {
  deploymentId: string;
  hosts: readonly HostConfig[];
}): React.JSX.Element {
  const [status, setStatus] = useState<PrometheusStatus | null>(null);
  const [error, setError] = useState<Err>(null);
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState<string | null>(null);
  const [howTo, setHowTo] = useState<string[] | null>(null);
  const [url, setUrl] = useState('');
  const [via, setVia] = useState('');
  const [authKind, setAuthKind] = useState<'none' | 'basic' | 'bearer'>('none');
  const [user, setUser] = useState('');
  const [secret, setSecret] = useState('');
  const [caFile, setCaFile] = useState('');

  const run = useCallback(async (p: () => Promise<PrometheusStatus>) => {
    setBusy(true);
    setError(null);
    try {
      setStatus(await p());
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  }, []);

  useEffect(() => {
    let live = true;
    api.getPrometheusStatus({ deploymentId }).then(
      (st) => live && setStatus(st),
      (err: unknown) => live && setError(errorText(err)),
    );
    return () => {
      live = false;
    };
  }, [deploymentId]);

  const exportFile = async (which: 'config' | 'dashboard', how: 'save' | 'copy'): Promise<void> => {
    setError(null);
    setNote(null);
    try {
      const f =
        which === 'config'
          ? await api.exportPrometheusConfig({ deploymentId })
          : await api.exportGrafanaDashboard({ deploymentId });
      if (how === 'save') save(f);
      else setNote((await copy(f.text)) ? `Copied ${f.fileName}` : 'The clipboard refused; use Save instead');
      setHowTo(f.notes ?? null);
    } catch (err) {
      setError(errorText(err));
    }
  };

  const useUrl = (): void => {
    const auth =
      authKind === 'basic'
        ? { kind: 'basic' as const, user, password: secret }
        : authKind === 'bearer'
          ? { kind: 'bearer' as const, token: secret }
          : undefined;
    void run(async () => {
      const st = await api.setPrometheusSource({
        deploymentId,
        url: url.trim(),
        ...(via ? { viaHost: via } : {}),
        ...(auth ? { auth } : {}),
        ...(caFile.trim() ? { caFile: caFile.trim() } : {}),
      });
      // The URL as used: a user and password typed into it are in the secret store now, not on screen.
      if (st.source?.kind === 'url') setUrl(st.source.url);
      return st;
    });
    setSecret('');
  };

  const s = status;
  return (
    <section className="card prometheus-panel" data-testid="prometheus-panel">
      <header>
        <h2>Prometheus</h2>
        <button
          onClick={() => void run(() => api.getPrometheusStatus({ deploymentId, fresh: true }))}
          disabled={busy}
        >
          {busy ? 'Asking…' : 'Check again'}
        </button>
      </header>
      {error && (
        <div className="error-box" data-testid="prometheus-error">
          <p>{error.message}</p>
          {error.hint && <p className="hint">{error.hint}</p>}
        </div>
      )}
      {!s && !error && <p className="muted">Looking for a Prometheus on the deployment’s hosts…</p>}
      {s && (
        <>
          {s.source ? (
            <p data-testid="prometheus-source">
              Using <strong>{s.source.label}</strong> ({s.source.engine ?? 'Prometheus API'} at{' '}
              <code>{s.source.url}</code>
              {s.source.viaHost
                ? ` through ${s.source.viaHost}’s SSH tunnel`
                : ', dialled from this computer'}
              {s.source.auth ? `, ${s.source.auth} auth` : ''}
              {s.source.caFile ? `, CA file ${s.source.caFile}` : ''})
              {s.retentionS !== null && (
                <span data-testid="prometheus-retention">; keeps {duration(s.retentionS)} of history</span>
              )}
              .
            </p>
          ) : (
            <p data-testid="prometheus-none">
              No Prometheus, vmagent or VictoriaMetrics unit found on the deployment’s hosts — here is the
              configuration to run one with:
            </p>
          )}
          {s.source?.warnings?.map((w) => (
            <p className="muted small" key={w} data-testid="prometheus-warning">
              {w}
            </p>
          ))}
          {s.found.length > 1 && (
            <p className="muted small">
              Also found: {s.found.map((f) => `${f.unit} on ${f.hostLabel} (${f.url})`).join(', ')}
            </p>
          )}
          {s.found
            .flatMap((f) => f.notes)
            .map((n) => (
              <p className="muted small" key={n}>
                {n}
              </p>
            ))}
          {s.hostErrors.map((h) => (
            <p className="muted small" key={h.hostLabel}>
              {h.hostLabel}: {h.message}
            </p>
          ))}
          {s.problem && (
            <div className="error-box" data-testid="prometheus-problem">
              <p>{s.problem.message}</p>
              {s.problem.fix && <p className="hint">{s.problem.fix}</p>}
            </div>
          )}
          {s.source && (
            <table className="prometheus-endpoints" data-testid="prometheus-endpoints">
              <thead>
                <tr>
                  <th>endpoint</th>
                  <th>scraped</th>
                  <th>job</th>
                  <th>instance</th>
                  <th>every</th>
                </tr>
              </thead>
              <tbody>
                {s.endpoints.map((e) => (
                  <tr key={`${e.id}|${e.metricsUrl}`} data-testid={`prometheus-endpoint-${e.id}`}>
                    <td>
                      {e.name} <code>{e.metricsUrl}</code> <span className="muted">on {e.hostLabel}</span>
                    </td>
                    <td className={e.scraped ? (e.health === 'up' ? 'ok' : 'warn') : 'bad'}>
                      {e.scraped ? (e.health === 'up' ? 'yes' : `yes, ${e.health}`) : 'no'}
                    </td>
                    <td>{e.job ?? '—'}</td>
                    <td>{e.instance ?? '—'}</td>
                    <td>{e.intervalS ? `${e.intervalS} s` : '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {s.endpoints
            .filter((e) => e.addLines || (e.scraped && e.health !== 'up'))
            .map((e) => (
              <div key={`add-${e.id}`} className="prometheus-add" data-testid={`prometheus-add-${e.id}`}>
                <p>{e.message}</p>
                {e.addLines && (
                  <>
                    <pre>{e.addLines}</pre>
                    <button
                      onClick={() => void copy(e.addLines!).then((ok) => setNote(ok ? 'Copied' : null))}
                    >
                      Copy lines
                    </button>
                  </>
                )}
              </div>
            ))}
          {!s.source && <pre data-testid="prometheus-suggested">{s.suggestedConfig}</pre>}
        </>
      )}
      <div className="prometheus-exports">
        <span>prometheus.yml</span>
        <button data-testid="prometheus-export-config" onClick={() => void exportFile('config', 'save')}>
          Save
        </button>
        <button onClick={() => void exportFile('config', 'copy')}>Copy</button>
        <span>Grafana dashboard</span>
        <button
          data-testid="prometheus-export-dashboard"
          onClick={() => void exportFile('dashboard', 'save')}
        >
          Save
        </button>
        <button onClick={() => void exportFile('dashboard', 'copy')}>Copy</button>
        {note && <span className="muted small">{note}</span>}
      </div>
      {howTo && (
        <pre className="prometheus-howto" data-testid="prometheus-config-howto">
          {howTo.join('\n')}
        </pre>
      )}
      <details className="prometheus-source-form">
        <summary>Use another Prometheus (URL)</summary>
        <label>
          URL{' '}
          <input value={url} onChange={(e) => setUrl(e.target.value)} placeholder="http://127.0.0.1:9090" />
        </label>
        <label>
          reached{' '}
          <select value={via} onChange={(e) => setVia(e.target.value)}>
            <option value="">directly from this computer</option>
            {hosts.map((h) => (
              <option key={h.id} value={h.id}>
                through {h.label}’s SSH tunnel
              </option>
            ))}
          </select>
        </label>
        <label>
          auth{' '}
          <select value={authKind} onChange={(e) => setAuthKind(e.target.value as typeof authKind)}>
            <option value="none">none</option>
            <option value="basic">basic</option>
            <option value="bearer">bearer token</option>
          </select>
        </label>
        {authKind === 'basic' && (
          <label>
            user <input value={user} onChange={(e) => setUser(e.target.value)} />
          </label>
        )}
        {authKind !== 'none' && (
          <label>
            {authKind === 'basic' ? 'password' : 'token'}{' '}
            <input type="password" value={secret} onChange={(e) => setSecret(e.target.value)} />
          </label>
        )}
        {url.trim().startsWith('https:') && (
          <label>
            CA file{' '}
            <input
              data-testid="prometheus-ca-file"
              value={caFile}
              onChange={(e) => setCaFile(e.target.value)}
              placeholder="/path/to/private-ca.pem (only for a private CA)"
            />
          </label>
        )}
        <button className="primary" disabled={busy || url.trim() === ''} onClick={useUrl}>
          Use it
        </button>
        <button
          disabled={busy}
          onClick={() => void run(() => api.setPrometheusSource({ deploymentId, url: null }))}
        >
          Back to discovery
        </button>
      </details>
    </section>
  );
}
