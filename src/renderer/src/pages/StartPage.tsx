// First run: open the demo deployment, or connect to a host by ssh alias or user@host[:port].
import { useState } from 'react';
import type { HostConfig } from '@shared/domain';
import type { DemoTopology } from '@shared/api/monitoring';
import { api } from '../api/client';
import { errorText } from '../api/errors';
import { addDeployment } from '../state/store';
import { HostsPanel } from '../hosts/HostsPanel';
import { RecentCard } from '../sessions/RecentCard';
import { HOST_SPEC_HELP, parseHostSpec } from '@shared/host-spec';

export function parseHostInput(input: string): HostConfig | string {
  return parseHostSpec(input) ?? `Enter ${HOST_SPEC_HELP}.`;
}

export function StartPage(): React.JSX.Element {
  const [busy, setBusy] = useState<DemoTopology | 'host' | null>(null);
  const [error, setError] = useState<{ message: string; hint?: string } | null>(null);
  const [hostInput, setHostInput] = useState('');

  const openDemo = async (topology: DemoTopology): Promise<void> => {
    setBusy(topology);
    setError(null);
    try {
      addDeployment(await api.openDemo(topology === 'fleet' ? { topology } : {}));
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(null);
    }
  };

  const connect = async (e: React.FormEvent): Promise<void> => {
    e.preventDefault();
    const host = parseHostInput(hostInput);
    if (typeof host === 'string') {
      setError({ message: host });
      return;
    }
    setBusy('host');
    setError(null);
    try {
      addDeployment(await api.connectHost({ host }));
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(null);
    }
  };

  return (
    <main className="start">
      <h1>PD Console</h1>
      <p className="lede">
        Health, KV-cache usage and safe restarts for SGLang prefill–decode deployments, over plain SSH.
      </p>
      <div className="start-grid">
        <section className="card">
          <h2>Try it now</h2>
          <p>
            A simulated 8-GPU host (prefill on GPUs 0–3, decode on 4–7, a router) reached through the real SSH
            client.
          </p>
          <button
            className="primary"
            data-testid="open-demo"
            onClick={() => void openDemo('single')}
            disabled={busy !== null}
          >
            {busy === 'single' ? 'Opening demo…' : 'Open demo deployment'}
          </button>
          <p data-testid="demo-fleet-line">
            Or a simulated fleet: three hosts, a router, two prefill and three decode workers, one of them
            spanning two hosts.
          </p>
          <button
            data-testid="open-demo-fleet"
            onClick={() => void openDemo('fleet')}
            disabled={busy !== null}
          >
            {busy === 'fleet' ? 'Opening demo fleet…' : 'Open demo fleet'}
          </button>
        </section>
        <section className="card">
          <h2>Connect to a host</h2>
          <form onSubmit={(e) => void connect(e)}>
            <label htmlFor="host-input">ssh alias or user@host[:port]</label>
            <input
              id="host-input"
              data-testid="host-input"
              placeholder="gpu-box"
              value={hostInput}
              onChange={(e) => setHostInput(e.target.value)}
              autoComplete="off"
              spellCheck={false}
            />
            <button type="submit" data-testid="connect-host" disabled={busy !== null || !hostInput.trim()}>
              {busy === 'host' ? 'Connecting…' : 'Connect'}
            </button>
          </form>
        </section>
        <HostsPanel />
        <RecentCard />
      </div>
      {error && (
        <div className="error-box" role="alert" data-testid="start-error">
          <strong>{error.message}</strong>
          {error.hint && <p>{error.hint}</p>}
        </div>
      )}
    </main>
  );
}
