// The questions SSH asks while connecting — unknown host key, key passphrase, password — as dialogs.
// A host key is shown exactly as `ssh-keygen -lf` prints it, with the file it will be written to; nothing
// connects until the operator answers. Secrets go straight back to the core and are not kept here.
import { useEffect, useState } from 'react';
import type { SshPromptEvent } from '@shared/api/hosts';
import { api } from '../api/client';
import { errorText } from '../api/errors';

export function SshPromptLayer(): React.JSX.Element | null {
  const [queue, setQueue] = useState<SshPromptEvent[]>([]);
  useEffect(() => {
    const offOpen = api.on('sshPrompt', (p) => setQueue((q) => [...q, p]));
    const offClose = api.on('sshPromptClosed', ({ promptId }) =>
      setQueue((q) => q.filter((p) => p.promptId !== promptId)),
    );
    return () => {
      offOpen();
      offClose();
    };
  }, []);
  const current = queue[0];
  if (!current) return null;
  return <PromptDialog key={current.promptId} prompt={current} />;
}

function PromptDialog({ prompt }: { prompt: SshPromptEvent }): React.JSX.Element {
  const [secret, setSecret] = useState('');
  const [remember, setRemember] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const info = prompt.info as Record<string, string | number | boolean | undefined | unknown[]>;
  const answer = (a: { accept?: boolean; secret?: string | null; remember?: boolean }): void => {
    void api
      .answerSshPrompt({ promptId: prompt.promptId, ...a })
      .catch((err) => setError(errorText(err).message));
  };
  return (
    <div className="modal-backdrop">
      <div
        className="help ssh-prompt"
        role="dialog"
        aria-label="SSH question"
        data-testid={`ssh-prompt-${prompt.kind}`}
      >
        {prompt.kind === 'hostKey' ? (
          <>
            <h2>Unknown host key for {prompt.label}</h2>
            <p>
              The authenticity of <strong>{String(info.host)}</strong>
              {info.port !== 22 ? <> port {String(info.port)}</> : null}
              {info.jumpFor ? <> (jump host for {String(info.jumpFor)})</> : null} can't be established.
            </p>
            <p>
              {String(info.keyType)} key fingerprint is
              <br />
              <code data-testid="host-key-fingerprint">{String(info.fingerprint)}</code>
            </p>
            <p className="muted">
              Compare it with the fingerprint the host's administrator gives you (on the host:{' '}
              <code>ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub</code>). If you trust it, it is added to{' '}
              <code>{String(info.knownHostsFile)}</code>.
            </p>
            <div className="actions">
              <button
                className="primary"
                data-testid="host-key-accept"
                onClick={() => answer({ accept: true })}
              >
                Trust and connect
              </button>
              <button data-testid="host-key-reject" onClick={() => answer({ accept: false })}>
                Refuse
              </button>
            </div>
          </>
        ) : (
          <form
            onSubmit={(e) => {
              e.preventDefault();
              answer({ secret, remember });
            }}
          >
            <h2>
              {prompt.kind === 'passphrase'
                ? `Passphrase for ${String(info.keyFile)}`
                : info.kind === 'keyboard-interactive'
                  ? `${prompt.label} asks`
                  : `Password for ${String(info.user)}@${String(info.host)}`}
            </h2>
            {prompt.kind === 'passphrase' && info.previousWasWrong ? (
              <p className="bad">
                That passphrase did not decrypt the key (attempt {String(info.attempt)} of{' '}
                {String(info.maxAttempts)}).
              </p>
            ) : null}
            {info.instructions ? <p>{String(info.instructions)}</p> : null}
            <label htmlFor="ssh-secret">
              {prompt.kind === 'password' ? String(info.prompt || 'Password:') : 'Passphrase'}
            </label>
            <input
              id="ssh-secret"
              data-testid="ssh-secret"
              type={prompt.kind === 'password' && info.echo ? 'text' : 'password'}
              autoFocus
              autoComplete="off"
              value={secret}
              onChange={(e) => setSecret(e.target.value)}
            />
            {prompt.kind === 'passphrase' && info.canRemember ? (
              <label className="check">
                <input type="checkbox" checked={remember} onChange={(e) => setRemember(e.target.checked)} />{' '}
                Remember in the system keychain
              </label>
            ) : null}
            <div className="actions">
              <button className="primary" type="submit" data-testid="ssh-secret-submit">
                Continue
              </button>
              <button type="button" onClick={() => answer({ secret: null })}>
                Cancel
              </button>
            </div>
          </form>
        )}
        {error && <p className="bad">{error}</p>}
      </div>
    </div>
  );
}
