// Saved hosts: connect with one click; add an ssh alias (resolved like `ssh alias`) or host/port/user/key.
import './hosts.css';
import { useEffect, useState } from 'react';
import type { HostConfig } from '@shared/domain';
import { isPlainLine, PLAIN_LINE_MESSAGE } from '@shared/display-text';
import { api } from '../api/client';
import { errorText } from '../api/errors';
import { addDeployment } from '../state/store';

type Draft = {
  label: string;
  alias: string;
  hostname: string;
  port: string;
  user: string;
  identityFile: string;
};
const EMPTY: Draft = { label: '', alias: '', hostname: '', port: '', user: '', identityFile: '' };

/**
 * A host's name is printed on one line wherever it is shown (here, the CLI, recordings): one with a line break or
 * a control character (pasted from a terminal) is refused before it is sent, as hosts.json would refuse it.
 */
function nameProblem(label: string): { message: string; hint: string } | null {
  return isPlainLine(label)
    ? null
    : {
        message: `The name shown in the app ${PLAIN_LINE_MESSAGE}.`,
        hint: 'Type it again rather than pasting it from a terminal.',
      };
}

export function HostsPanel(): React.JSX.Element {
  const [hosts, setHosts] = useState<HostConfig[]>([]);
  const [file, setFile] = useState('');
  const [loadError, setLoadError] = useState<{ message: string; hint?: string } | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<{ message: string; hint?: string } | null>(null);
  const [draft, setDraft] = useState<Draft | null>(null);
  /** The host whose display name is being edited, and the name typed so far. */
  const [renaming, setRenaming] = useState<{ id: string; label: string } | null>(null);

  // Bumped after every change; the effect below re-reads the hosts file.
  const [version, setVersion] = useState(0);
  const reload = (): void => setVersion((v) => v + 1);
  useEffect(() => {
    let live = true;
    api
      .listHosts({})
      .then((r) => {
        if (!live) return;
        setHosts(r.hosts);
        setFile(r.file);
        setLoadError(r.error ?? null);
      })
      .catch((err: unknown) => live && setLoadError(errorText(err)));
    return () => {
      live = false;
    };
  }, [version]);

  const connect = async (host: HostConfig): Promise<void> => {
    setBusy(host.id);
    setError(null);
    try {
      addDeployment(await api.connectHost({ host }));
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(null);
    }
  };

  const save = async (e: React.FormEvent): Promise<void> => {
    e.preventDefault();
    if (!draft) return;
    const alias = draft.alias.trim();
    const label = draft.label.trim() || alias || draft.hostname.trim();
    const problem = nameProblem(label);
    setError(problem);
    if (problem) return;
    try {
      await api.addHost({
        host: {
          label,
          kind: 'ssh',
          ...(alias
            ? { alias }
            : {
                hostname: draft.hostname.trim(),
                ...(draft.port.trim() ? { port: Number(draft.port) } : {}),
                ...(draft.user.trim() ? { user: draft.user.trim() } : {}),
                ...(draft.identityFile.trim() ? { identityFile: draft.identityFile.trim() } : {}),
              }),
        },
      });
      setDraft(null);
      reload();
    } catch (err) {
      setError(errorText(err));
    }
  };

  // The display name lives in hosts.json with the rest of the host; it changes at once everywhere.
  const rename = async (e: React.FormEvent): Promise<void> => {
    e.preventDefault();
    if (!renaming) return;
    const label = renaming.label.trim();
    if (!label) return;
    const problem = nameProblem(label);
    setError(problem);
    if (problem) return;
    try {
      await api.updateHost({ id: renaming.id, patch: { label } });
      setRenaming(null);
      reload();
    } catch (err) {
      setError(errorText(err));
    }
  };

  const remove = async (id: string): Promise<void> => {
    try {
      await api.removeHost({ id });
      reload();
    } catch (err) {
      setError(errorText(err));
    }
  };

  const field = (k: keyof Draft, label: string, placeholder = ''): React.JSX.Element => (
    <label>
      {label}
      <input
        data-testid={`host-field-${k}`}
        value={draft?.[k] ?? ''}
        placeholder={placeholder}
        onChange={(e) => setDraft({ ...(draft ?? EMPTY), [k]: e.target.value })}
        spellCheck={false}
        autoComplete="off"
      />
    </label>
  );

  return (
    <section className="card hosts-panel" data-testid="hosts-panel">
      <header>
        <h2>Saved hosts</h2>
        <button data-testid="add-host" onClick={() => setDraft(draft ? null : EMPTY)}>
          {draft ? 'Cancel' : 'Add host'}
        </button>
      </header>
      {loadError && (
        <div className="error-box" role="alert">
          <strong>{loadError.message}</strong>
          {loadError.hint && <p>{loadError.hint}</p>}
        </div>
      )}
      {hosts.length === 0 && !loadError ? (
        <p className="muted">No saved hosts yet. Add one, or type an alias below.</p>
      ) : (
        <ul className="host-list">
          {hosts.map((h) => (
            <li key={h.id} data-testid={`host-${h.id}`}>
              {renaming?.id === h.id ? (
                <form className="host-rename" onSubmit={(e) => void rename(e)}>
                  <input
                    data-testid={`rename-field-${h.id}`}
                    aria-label={`New name for ${h.label}`}
                    value={renaming.label}
                    autoFocus
                    onChange={(e) => setRenaming({ id: h.id, label: e.target.value })}
                    onKeyDown={(e) => e.key === 'Escape' && setRenaming(null)}
                  />
                  <button type="submit" data-testid={`rename-save-${h.id}`}>
                    Save name
                  </button>
                </form>
              ) : (
                <span>
                  <strong>{h.label}</strong>{' '}
                  <span className="muted">
                    {h.alias
                      ? `ssh ${h.alias}`
                      : `${h.user ? `${h.user}@` : ''}${h.hostname}${h.port ? `:${h.port}` : ''}`}
                  </span>
                </span>
              )}
              <span className="actions">
                <button
                  className="primary"
                  disabled={busy !== null}
                  onClick={() => void connect(h)}
                  data-testid={`connect-${h.id}`}
                >
                  {busy === h.id ? 'Connecting…' : 'Connect'}
                </button>
                <button
                  onClick={() => setRenaming({ id: h.id, label: h.label })}
                  aria-label={`Rename ${h.label}`}
                  data-testid={`rename-${h.id}`}
                >
                  Rename
                </button>
                <button onClick={() => void remove(h.id)} aria-label={`Remove ${h.label}`}>
                  Remove
                </button>
              </span>
            </li>
          ))}
        </ul>
      )}
      {draft && (
        <form className="host-form" onSubmit={(e) => void save(e)}>
          {field('alias', 'ssh alias (from ~/.ssh/config)', 'gpu-box')}
          <p className="muted">…or host details:</p>
          {field('hostname', 'Host', 'gpu01.example.com')}
          {field('port', 'Port', '22')}
          {field('user', 'User')}
          {field('identityFile', 'Key file', '~/.ssh/id_ed25519')}
          {field('label', 'Name shown in the app')}
          <button className="primary" type="submit" data-testid="save-host">
            Save host
          </button>
        </form>
      )}
      {error && (
        <div className="error-box" role="alert" data-testid="hosts-error">
          <strong>{error.message}</strong>
          {error.hint && <p>{error.hint}</p>}
        </div>
      )}
      {file && <p className="muted small">Stored in {file}</p>}
    </section>
  );
}
