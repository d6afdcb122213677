// Recorded sessions: every monitoring session is recorded; here they are listed (name, host, deployment, start,
// duration, size, state and what went wrong), opened for review, renamed, annotated at a time, exported
// (CSV, OpenMetrics, incident bundle) and deleted — and the retention limit is set.
import { useCallback, useEffect, useRef, useState } from 'react';
import type { RecentReview, RecordingStatus, SessionInfoDto } from '@shared/contract';
import { OLD_FORMAT_NOTE } from '@shared/api/review';
import { api } from '../api/client';
import { errorText } from '../api/errors';
import { setActive, useAppState } from '../state/store';
import { formatDateTime, formatDuration } from '../format';
import { closeSessionsPage } from './state';
import { showOpenedReview } from './open-review';
import { openRecordingFile, RECORDING_SUFFIX } from './upload';
import { SessionExport } from './SessionExport';
import { formatSize } from './format-size';
import './sessions.css';

type ErrorText = { message: string; hint?: string };

export function SessionsPage(): React.JSX.Element {
  const app = useAppState();
  const [sessions, setSessions] = useState<SessionInfoDto[] | null>(null);
  const [status, setStatus] = useState<RecordingStatus | null>(null);
  const [recent, setRecent] = useState<RecentReview[]>([]);
  const [error, setError] = useState<ErrorText | null>(null);
  const [opening, setOpening] = useState<string | null>(null);
  const fileInput = useRef<HTMLInputElement>(null);

  const refresh = useCallback(
    (): Promise<void> =>
      Promise.all([api.listSessions({}), api.getRecordingStatus({}), api.listRecentReviews({})]).then(
        ([s, st, r]) => {
          setSessions(s);
          setStatus(st);
          setRecent(r);
        },
        (err: unknown) => setError(errorText(err)),
      ),
    [],
  );

  useEffect(() => {
    void refresh();
    // Sizes and states change while a session records: follow the recorder's pushes, at most every 5 s.
    let last = 0;
    return api.on('recordingStatus', (st) => {
      setStatus(st);
      if (Date.now() - last > 5000) {
        last = Date.now();
        void refresh();
      }
    });
  }, [refresh]);

  const run = async (label: string, f: () => Promise<void>): Promise<void> => {
    setOpening(label);
    setError(null);
    try {
      await f();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setOpening(null);
    }
  };
  const openSession = (id: string): Promise<void> =>
    run(id, async () => showOpenedReview(await api.openSessionReview({ id })));
  const openFile = (file: File): Promise<void> =>
    run(file.name, async () => showOpenedReview(await openRecordingFile(file)));

  const total = sessions?.reduce((a, s) => a + s.sizeBytes, 0) ?? 0;
  const open = Object.values(app.deployments);
  return (
    <main className="sessions-page" data-testid="sessions-page">
      <header className="sessions-head">
        <h1>Recorded sessions</h1>
        <button onClick={closeSessionsPage} data-testid="sessions-back">
          {open.length ? '← Back to the console' : '← Back'}
        </button>
        <button
          className="primary"
          onClick={() => fileInput.current?.click()}
          data-testid="sessions-open-file"
        >
          Open a recording file…
        </button>
        <input
          ref={fileInput}
          type="file"
          accept=".gz"
          hidden
          data-testid="sessions-file-input"
          onChange={(e) => {
            const f = e.target.files?.[0];
            e.target.value = '';
            if (f) void openFile(f);
          }}
        />
        <span className="muted small">or drop a {RECORDING_SUFFIX} file anywhere on this window</span>
      </header>
      {opening && (
        <p className="muted" role="status" data-testid="sessions-busy">
          Opening {opening}…
        </p>
      )}
      {error && (
        <div className="error-box" role="alert" data-testid="sessions-error">
          <strong>{error.message}</strong>
          {error.hint && <p>{error.hint}</p>}
        </div>
      )}
      {open.length > 0 && (
        <section className="card">
          <h2>Open now</h2>
          <ul className="plain-list">
            {open.map((d) => (
              <li key={d.summary.deployment.id}>
                <button
                  className="link"
                  data-testid={`sessions-show-${d.summary.deployment.id}`}
                  onClick={() => {
                    setActive(d.summary.deployment.id);
                    closeSessionsPage();
                  }}
                >
                  {d.summary.deployment.name}
                </button>{' '}
                <span className="muted">
                  {d.summary.review ? 'review of a recording' : `live on ${d.summary.host.label}`}
                </span>
              </li>
            ))}
          </ul>
        </section>
      )}
      {status && <RecordingSettingsCard status={status} totalBytes={total} onChange={setStatus} />}
      {recent.length > 0 && (
        <section className="card" data-testid="recent-reviews">
          <h2>Recently reviewed</h2>
          <RecentList
            recent={recent}
            onOpen={(key) => run(key, async () => showOpenedReview(await api.openRecentReview({ key })))}
          />
        </section>
      )}
      <section className="card">
        <header>
          <h2>All sessions</h2>
          <button className="icon" onClick={() => void refresh()} data-testid="sessions-refresh">
            Refresh
          </button>
        </header>
        {!sessions ? (
          <p className="muted">Reading the recordings folder…</p>
        ) : sessions.length === 0 ? (
          <p className="muted" data-testid="sessions-empty">
            No recorded sessions yet. Every deployment you open is recorded while recording is on.
          </p>
        ) : (
          <table className="sessions-table" data-testid="sessions-table">
            <thead>
              <tr>
                <th>Name</th>
                <th>Host</th>
                <th>Deployment</th>
                <th>Start</th>
                <th>Duration</th>
                <th>Size</th>
                <th>State</th>
                <th aria-label="Actions" />
              </tr>
            </thead>
            <tbody>
              {sessions.map((s) => (
                <SessionRow
                  key={s.id}
                  s={s}
                  busy={opening === s.id}
                  onOpen={() => void openSession(s.id)}
                  onChanged={() => void refresh()}
                />
              ))}
            </tbody>
          </table>
        )}
      </section>
    </main>
  );
}

export function RecentList({
  recent,
  onOpen,
  limit = 20,
}: {
  recent: RecentReview[];
  onOpen: (key: string) => void;
  limit?: number;
}): React.JSX.Element {
  return (
    <ul className="plain-list recent-list">
      {recent.slice(0, limit).map((r) => (
        <li key={r.key} data-testid="recent-review">
          <button
            className="link"
            disabled={!r.exists}
            onClick={() => onOpen(r.key)}
            data-testid={`recent-open-${r.key}`}
          >
            {r.name}
          </button>{' '}
          <span className="muted small">
            {r.hostLabel} · {formatDateTime(r.firstTs)} · {formatDuration(r.lastTs - r.firstTs)}
            {r.exists ? '' : ' · the file is gone'}
          </span>
        </li>
      ))}
    </ul>
  );
}

function RecordingSettingsCard({
  status,
  totalBytes,
  onChange,
}: {
  status: RecordingStatus;
  totalBytes: number;
  onChange: (s: RecordingStatus) => void;
}): React.JSX.Element {
  const [gib, setGib] = useState(String(+(status.settings.maxTotalBytes / 1024 ** 3).toFixed(2)));
  const [error, setError] = useState<string | null>(null);
  const save = async (patch: { enabled?: boolean; maxTotalBytes?: number }): Promise<void> => {
    setError(null);
    try {
      onChange(await api.setRecordingSettings(patch));
    } catch (err) {
      setError(errorText(err).message);
    }
  };
  const active = status.active.filter((a) => a.state === 'recording');
  const stopped = status.active.filter((a) => a.state === 'stopped');
  return (
    <section className="card recording-settings" data-testid="recording-settings">
      <h2>Recording</h2>
      <p>
        <label className="inline">
          <input
            type="checkbox"
            checked={status.settings.enabled}
            data-testid="recording-enabled"
            onChange={(e) => void save({ enabled: e.target.checked })}
          />{' '}
          Record every session I open
        </label>{' '}
        <span className="muted small">
          ({active.length ? `${active.length} recording now` : 'nothing recording now'}; folder{' '}
          <code>{status.dir}</code>)
        </span>
      </p>
      {stopped.map((s) => (
        <p key={s.deploymentId} className="bad">
          {s.error}
        </p>
      ))}
      <form
        className="retention"
        onSubmit={(e) => {
          e.preventDefault();
          const v = Number(gib);
          if (!(v > 0)) return setError('Enter a size in GiB, e.g. 2');
          void save({ maxTotalBytes: Math.round(v * 1024 ** 3) });
        }}
      >
        <label>
          Keep at most{' '}
          <input
            type="number"
            min="0.02"
            step="0.1"
            value={gib}
            onChange={(e) => setGib(e.target.value)}
            data-testid="retention-gib"
          />{' '}
          GiB of recordings
        </label>
        <button type="submit" data-testid="retention-save">
          Apply
        </button>
        <span className="muted small" data-testid="retention-usage">
          {formatSize(totalBytes)} used of {formatSize(status.settings.maxTotalBytes)}. The oldest sessions
          are deleted first; the one being recorded never is.
        </span>
      </form>
      {error && <p className="bad">{error}</p>}
    </section>
  );
}

function toLocalInput(ts: number): string {
  const d = new Date(ts);
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

function SessionRow({
  s,
  busy,
  onOpen,
  onChanged,
}: {
  s: SessionInfoDto;
  busy: boolean;
  onOpen: () => void;
  onChanged: () => void;
}): React.JSX.Element {
  const [mode, setMode] = useState<'none' | 'rename' | 'note' | 'export' | 'delete'>('none');
  const [name, setName] = useState(s.name);
  const [note, setNote] = useState('');
  const [noteAt, setNoteAt] = useState(toLocalInput(s.endedAt));
  const [working, setWorking] = useState(false);
  const [error, setError] = useState<ErrorText | null>(null);
  const act = async (f: () => Promise<void>): Promise<void> => {
    setWorking(true);
    setError(null);
    try {
      await f();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setWorking(false);
    }
  };
  const damaged = s.state === 'damaged';
  // Written in an older format: re-saving it (what `pd-console recording resave` does) makes it open at once.
  const old = s.state === 'complete' && s.warnings.includes(OLD_FORMAT_NOTE);
  return (
    <>
      <tr data-testid="session-row" data-id={s.id} data-state={s.state}>
        <td className="name">{s.name}</td>
        <td>{s.hostLabel || '—'}</td>
        <td>{s.deploymentName || '—'}</td>
        <td>{formatDateTime(s.startedAt)}</td>
        <td>{formatDuration(s.durationMs)}</td>
        <td>{formatSize(s.sizeBytes)}</td>
        <td>
          <span className={`pill state-${s.state}`} data-testid="session-state">
            {s.state}
          </span>
          {s.annotations > 0 && <span className="muted small"> · {s.annotations} notes</span>}
          {s.warnings.length > 0 && (
            <div className="small warn-text" data-testid="session-warnings">
              {s.warnings.join(' ')}
            </div>
          )}
        </td>
        <td>
          <div className="actions">
            <button
              className="primary"
              disabled={busy || damaged}
              onClick={onOpen}
              data-testid={`session-open-${s.id}`}
              title={
                damaged
                  ? 'This file cannot be read (see the state); delete it or keep it for inspection.'
                  : 'Open for review'
              }
            >
              {busy ? 'Opening…' : 'Open'}
            </button>
            {old && (
              <button
                disabled={busy || working}
                onClick={() =>
                  void act(async () => {
                    await api.resaveSession({ id: s.id });
                    onChanged();
                  })
                }
                title="Rewrite it in the current format (same values, states, events and journal) so that it opens at once"
                data-testid={`session-resave-${s.id}`}
              >
                {working ? 'Re-saving…' : 'Re-save'}
              </button>
            )}
            {(['rename', 'note', 'export'] as const).map((m) => (
              <button
                key={m}
                aria-pressed={mode === m}
                disabled={damaged && m !== 'rename'}
                onClick={() => setMode(mode === m ? 'none' : m)}
                data-testid={`session-${m}-${s.id}`}
              >
                {m === 'rename' ? 'Rename' : m === 'note' ? 'Note' : 'Export'}
              </button>
            ))}
            <button
              className={mode === 'delete' ? 'danger' : ''}
              disabled={s.state === 'recording'}
              title={
                s.state === 'recording'
                  ? 'Being recorded: close its deployment first.'
                  : 'Delete this session'
              }
              onClick={() =>
                mode === 'delete'
                  ? void act(async () => {
                      await api.deleteSession({ id: s.id });
                      onChanged();
                    })
                  : setMode('delete')
              }
              data-testid={`session-delete-${s.id}`}
            >
              {mode === 'delete' ? 'Delete for good?' : 'Delete'}
            </button>
          </div>
        </td>
      </tr>
      {(mode === 'rename' || mode === 'note' || mode === 'export' || error) && (
        <tr className="session-detail">
          <td colSpan={8}>
            {mode === 'rename' && (
              <form
                className="inline-form"
                onSubmit={(e) => {
                  e.preventDefault();
                  void act(async () => {
                    await api.renameSession({ id: s.id, name });
                    setMode('none');
                    onChanged();
                  });
                }}
              >
                <input
                  value={name}
                  maxLength={200}
                  onChange={(e) => setName(e.target.value)}
                  data-testid="session-rename-input"
                />
                <button type="submit" disabled={working || !name.trim()} data-testid="session-rename-save">
                  Save name
                </button>
              </form>
            )}
            {mode === 'note' && (
              <form
                className="inline-form"
                onSubmit={(e) => {
                  e.preventDefault();
                  const ts = new Date(noteAt).getTime();
                  if (!Number.isFinite(ts))
                    return setError({ message: 'Pick the time the note belongs to.' });
                  void act(async () => {
                    await api.annotateSession({ id: s.id, ts, text: note });
                    setNote('');
                    setMode('none');
                    onChanged();
                  });
                }}
              >
                <input
                  type="datetime-local"
                  step="1"
                  value={noteAt}
                  onChange={(e) => setNoteAt(e.target.value)}
                  data-testid="session-note-time"
                />
                <input
                  value={note}
                  maxLength={10_000}
                  placeholder="What happened here"
                  onChange={(e) => setNote(e.target.value)}
                  data-testid="session-note-text"
                />
                <button type="submit" disabled={working || !note.trim()} data-testid="session-note-save">
                  Pin note
                </button>
              </form>
            )}
            {mode === 'export' && (
              <div className="inline-form">
                <SessionExport
                  sessionId={s.id}
                  testId={(f) => `session-export-${f}-${s.id}`}
                  resultTestId="export-result"
                />
              </div>
            )}
            {error && (
              <p className="bad" role="alert">
                {error.message}
                {error.hint ? ` — ${error.hint}` : ''}
              </p>
            )}
          </td>
        </tr>
      )}
    </>
  );
}
