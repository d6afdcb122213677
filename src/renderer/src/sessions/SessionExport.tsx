// Exporting a recorded session, the same on the sessions page and in review: the charted signals as CSV by default
// (a column per signal, what the charts draw), every raw series as an option (many times larger), OpenMetrics and
// the incident bundle. The backend writes the file; in browser mode the browser then downloads it from the
// backend, which may be another machine than the one the browser runs on.
import { useState } from 'react';
import type { ExportFormat, ExportResult } from '@shared/contract';
import { api, inBrowser } from '../api/client';
import { errorText } from '../api/errors';
import { downloadExport } from '../charts/export';
import { formatSize } from './format-size';

const LABEL: Record<ExportFormat, string> = {
  csv: 'CSV (charted signals)',
  'csv-raw': 'CSV (every raw series)',
  openmetrics: 'OpenMetrics',
  bundle: 'Incident bundle',
};

const TITLE: Record<ExportFormat, string> = {
  csv: 'One column per signal the charts draw (KV, latency, throughput, queues, GPUs…), one row per scrape',
  'csv-raw': 'Every series the servers exposed, one row per sample: many times larger',
  openmetrics: 'Every series the servers exposed, as OpenMetrics text',
  bundle: 'The recording, journal, unit files and a metrics snapshot, secrets redacted, as one .tar.gz',
};

export function SessionExport({
  sessionId,
  range,
  testId,
  resultTestId,
}: {
  sessionId: string;
  /** Only this window of the session, when given. */
  range?: { fromMs: number; toMs: number };
  testId: (f: ExportFormat) => string;
  resultTestId: string;
}): React.JSX.Element {
  const [busy, setBusy] = useState<ExportFormat | null>(null);
  const [result, setResult] = useState<ExportResult | null>(null);
  const [error, setError] = useState<string | null>(null);
  const run = async (format: ExportFormat): Promise<void> => {
    setBusy(format);
    setError(null);
    try {
      const r = await api.exportSession({ id: sessionId, format, ...(range ?? {}) });
      setResult(r);
      if (inBrowser) downloadExport(r.fileName);
    } catch (err) {
      const e = errorText(err);
      setError(`${e.message}${e.hint ? ` — ${e.hint}` : ''}`);
    } finally {
      setBusy(null);
    }
  };
  return (
    <>
      {(Object.keys(LABEL) as ExportFormat[]).map((f) => (
        <button
          key={f}
          disabled={busy !== null}
          data-testid={testId(f)}
          title={TITLE[f]}
          onClick={() => void run(f)}
        >
          {busy === f ? 'Exporting…' : LABEL[f]}
        </button>
      ))}
      {result && (
        <span data-testid={resultTestId} data-path={result.path} data-file={result.fileName}>
          {inBrowser ? 'Downloaded' : 'Written:'} <code>{inBrowser ? result.fileName : result.path}</code> (
          {formatSize(result.bytes)}
          {result.redactions !== undefined ? `, ${result.redactions} secrets redacted` : ''})
          {inBrowser ? (
            <span className="muted">
              {' '}
              — a copy stays on the backend at <code>{result.path}</code>
            </span>
          ) : null}
        </span>
      )}
      {error && (
        <span className="bad" role="alert">
          {error}
        </span>
      )}
    </>
  );
}
