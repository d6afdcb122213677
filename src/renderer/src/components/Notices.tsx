// Things the operator should know that are not alerts about the deployment: a line of ~/.ssh/config or
// known_hosts that was skipped (sshWarning), a recording that stopped or could not clean up (recordingStatus).
// They stay until dismissed, each once, and say where the problem is so it can be fixed.
import { useEffect, useState } from 'react';
import { api } from '../api/client';

interface Notice {
  key: string;
  tone: 'warn' | 'bad';
  title: string;
  detail: string;
}

const MAX = 6;

export function Notices(): React.JSX.Element | null {
  const [notices, setNotices] = useState<Notice[]>([]);
  const [dismissed, setDismissed] = useState<Set<string>>(() => new Set());
  useEffect(() => {
    const add = (n: Notice): void =>
      setNotices((list) => (list.some((x) => x.key === n.key) ? list : [...list, n].slice(-MAX)));
    const offSsh = api.on('sshWarning', (w) => {
      const where = w.file ? `${w.file}${w.line ? `:${w.line}` : ''}` : undefined;
      add({
        key: `ssh:${where ?? ''}:${w.message}`,
        tone: 'warn',
        title: 'SSH configuration',
        detail: where ? `${where}: ${w.message}` : w.message,
      });
    });
    const offRec = api.on('recordingStatus', (st) => {
      for (const p of st.problems)
        add({ key: `rec-problem:${p.at}:${p.message}`, tone: 'warn', title: 'Recording', detail: p.message });
      for (const a of st.active)
        if (a.error)
          add({
            key: `rec:${a.deploymentId}:${a.error}`,
            tone: a.state === 'stopped' ? 'bad' : 'warn',
            title: a.state === 'stopped' ? 'Recording stopped' : 'Recording',
            detail: a.error,
          });
    });
    return () => {
      offSsh();
      offRec();
    };
  }, []);
  const shown = notices.filter((n) => !dismissed.has(n.key));
  if (shown.length === 0) return null;
  return (
    <div className="notices" aria-live="polite" data-testid="notices">
      {shown.map((n) => (
        <div key={n.key} className={`notice notice-${n.tone}`} role="status" data-testid="notice">
          <div>
            <strong>{n.title}</strong>
            <span>{n.detail}</span>
          </div>
          <button
            className="notice-close"
            aria-label="Dismiss"
            onClick={() => setDismissed((d) => new Set(d).add(n.key))}
          >
            ×
          </button>
        </div>
      ))}
    </div>
  );
}
