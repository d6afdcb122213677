import { useEffect, useState } from 'react';
import { api, onBridgeState } from './api/client';
import { errorText } from './api/errors';
import { addDeployment, setInfo, useAppState, wireEvents } from './state/store';
import { StartPage } from './pages/StartPage';
import { Overview } from './pages/Overview';

export function App(): React.JSX.Element {
  const state = useAppState();
  const [bridge, setBridge] = useState<{ state: string; detail?: string }>({ state: 'open' });
  const [bootError, setBootError] = useState<string | null>(null);

  useEffect(() => onBridgeState((s, detail) => setBridge({ state: s, detail })), []);

  useEffect(() => {
    wireEvents();
    void (async () => {
      try {
        const info = await api.getAppInfo({});
        setInfo(info);
        const open = await api.listDeployments({});
        for (const d of open) addDeployment(d, await api.listEvents({ deploymentId: d.deployment.id }));
        if (info.autoOpenDemo && !open.some((d) => d.host.kind === 'demo'))
          addDeployment(await api.openDemo({}));
      } catch (err) {
        setBootError(errorText(err).message);
      }
    })();
  }, []);

  const active = state.activeId ? state.deployments[state.activeId] : undefined;
  return (
    <>
      {bridge.state === 'closed' && (
        <div className="banner banner-bad" role="alert" data-testid="backend-banner">
          Lost the connection to the PD Console backend ({bridge.detail}). Retrying… Data shown is frozen.
        </div>
      )}
      {bootError && (
        <div className="banner banner-bad" role="alert">
          Could not start: {bootError}
        </div>
      )}
      {active ? <Overview view={active} /> : <StartPage />}
    </>
  );
}
