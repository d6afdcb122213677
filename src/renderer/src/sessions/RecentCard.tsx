// On the start page: recordings reviewed lately, the sessions list, and opening a recording file.
import { useEffect, useRef, useState } from 'react';
import type { RecentReview } from '@shared/contract';
import { api } from '../api/client';
import { errorText } from '../api/errors';
import { RecentList } from './SessionsPage';
import { openSessionsPage } from './state';
import { showOpenedReview } from './open-review';
import { openRecordingFile, RECORDING_SUFFIX } from './upload';

export function RecentCard(): React.JSX.Element {
  const [recent, setRecent] = useState<RecentReview[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    api.listRecentReviews({}).then(setRecent, (err: unknown) => setError(errorText(err).message));
  }, []);
  const run = async (label: string, f: () => Promise<void>): Promise<void> => {
    setBusy(label);
    setError(null);
    try {
      await f();
    } catch (err) {
      const e = errorText(err);
      setError(`${e.message}${e.hint ? ` — ${e.hint}` : ''}`);
    } finally {
      setBusy(null);
    }
  };
  return (
    <section className="card" data-testid="start-sessions">
      <h2>Review a recorded session</h2>
      <p>Every session is recorded. Open one to replay it in this dashboard, offline.</p>
      <div className="row-buttons">
        <button data-testid="open-sessions" onClick={openSessionsPage}>
          Recorded sessions…
        </button>
        <button data-testid="start-open-file" onClick={() => input.current?.click()}>
          Open a file…
        </button>
        <input
          ref={input}
          type="file"
          accept=".gz"
          hidden
          onChange={(e) => {
            const f = e.target.files?.[0];
            e.target.value = '';
            if (f) void run(f.name, async () => showOpenedReview(await openRecordingFile(f)));
          }}
        />
      </div>
      <p className="muted small">or drop a {RECORDING_SUFFIX} file on this window.</p>
      {recent.length > 0 && (
        <>
          <h3 className="small muted">Recently reviewed</h3>
          <RecentList
            recent={recent}
            limit={5}
            onOpen={(key) => void run(key, async () => showOpenedReview(await api.openRecentReview({ key })))}
          />
        </>
      )}
      {busy && <p className="muted">Opening {busy}…</p>}
      {error && (
        <p className="bad" role="alert" data-testid="start-sessions-error">
          {error}
        </p>
      )}
    </section>
  );
}
