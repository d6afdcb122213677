import { useEffect, useMemo, useState } from 'react';
import type { DemoFaultState } from '@shared/demo-faults';
import {
  DEMO_ROUTER_ERA_LABEL,
  DEMO_ROUTER_ERAS,
  DEMO_SERVER_ERA_LABEL,
  DEMO_SERVER_ERAS,
  type OpenDemoArgs,
} from '@shared/api/monitoring';
import { api, onBridgeState, onReconnected } from './api/client';
import { errorText } from './api/errors';
import {
  addDeployment,
  removeDeployment,
  resyncFromBackend,
  setInfo,
  useAppState,
  wireEvents,
  type DeploymentView,
} from './state/store';
import { applyTheme, backToLive, navigate, pageHash, RANGES, setHelp, setRange, useUi } from './state/ui';
import { SeriesBatchProvider } from './charts/SeriesBatch';
import { requestNotifications } from './state/notifications';
import { StartPage } from './pages/StartPage';
import { HistoryPageNotice } from './charts/HistoryNote';
import { Overview } from './pages/Overview';
import { KvPage } from './pages/KvPage';
import { MetricsPage } from './pages/MetricsPage';
import { AlertsPage } from './pages/AlertsPage';
import { RolePage } from './pages/RolePage';
import { WorkerPage } from './pages/WorkerPage';
import { spansHosts } from './workers/fleet-model';
import { TopBar } from './components/TopBar';
import { ConnectionBanner } from './components/ConnectionBanner';
import { BackendLost } from './components/BackendLost';
import { CommandPalette, type Command } from './components/CommandPalette';
import { serviceId, type ServiceConfig } from '@shared/domain';
import { demoFaultCommands } from './demo/fault-commands';
import { ShortcutHelp } from './components/ShortcutHelp';
import { AroundDrawer } from './components/AroundDrawer';
import { AlertToasts } from './components/AlertToasts';
import { Notices } from './components/Notices';
import { useShortcuts } from './shortcuts';
import { RestartLayer, useRestartCommands } from './restart/RestartLayer';
import { SshPromptLayer } from './hosts/SshPromptLayer';
import { ReviewBar, useReviewNow } from './review/ReviewBar';
import { ReviewRoot } from './review/ReviewRoot';
import { reviewCommands } from './review/commands';
import { SessionsPage } from './sessions/SessionsPage';
import { openSessionsPage, useSessionsPage } from './sessions/state';
import { wireSettings } from './state/settings';
import { SettingsBanner } from './settings/SettingsBanner';

export function App(): React.JSX.Element {
  const state = useAppState();
  const [bridge, setBridge] = useState<{ state: string; detail?: string }>({ state: 'open' });
  // Bumped after each reconnection: the console remounts, so charts and journals fetch and follow again.
  const [epoch, setEpoch] = useState(0);
  const [bootError, setBootError] = useState<{ message: string; hint?: string } | null>(null);
  const [booting, setBooting] = useState(true);

  useEffect(() => onBridgeState(setBridge), []);
  useEffect(
    () =>
      onReconnected(() => {
        setBootError(null);
        resyncFromBackend()
          .catch((err: unknown) => setBootError(errorText(err)))
          .finally(() => setEpoch((e) => e + 1));
      }),
    [],
  );

  useEffect(() => {
    wireEvents();
    wireSettings();
    void (async () => {
      try {
        const info = await api.getAppInfo({});
        setInfo(info);
        const open = await api.listDeployments({});
        for (const d of open) addDeployment(d, await api.listEvents({ deploymentId: d.deployment.id }));
        if (info.autoOpenDemo && !open.some((d) => d.host.kind === 'demo'))
          addDeployment(await api.openDemo({}));
      } catch (err) {
        setBootError(errorText(err));
      } finally {
        setBooting(false);
      }
    })();
  }, []);

  const active = state.activeId ? state.deployments[state.activeId] : undefined;
  const sessionsPage = useSessionsPage();
  useShortcuts(active !== undefined && !sessionsPage);
  return (
    <>
      <BackendLost />
      {bootError && (
        <div className="banner banner-bad" role="alert">
          Could not start: {bootError.message}
          {bootError.hint ? ` — ${bootError.hint}` : ''}
        </div>
      )}
      <SettingsBanner />
      {sessionsPage ? (
        <SessionsPage />
      ) : active ? (
        <Console key={epoch} view={active} />
      ) : booting && bridge.state !== 'closed' ? (
        <p className="boot muted">Starting PD Console…</p>
      ) : (
        <StartPage />
      )}
      <ShortcutHelp />
      <AlertToasts />
      <Notices />
      <SshPromptLayer />
      <ReviewRoot />
    </>
  );
}

/** The eras this window last reopened the demo with, so choosing a router era keeps the server era. */
let demoEras: OpenDemoArgs = {};

function Console({ view }: { view: DeploymentView }): React.JSX.Element {
  const ui = useUi();
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);
  const { deployment, host } = view.summary;
  // The demo's faults and topology: a demo of several hosts is the fleet demo.
  const fleet = spansHosts(view.summary);
  const review = view.summary.review !== undefined;
  // A recording under review shows its cursor's moment: every "now" on the pages is that moment.
  const reviewNow = useReviewNow(view);
  const shownNow = reviewNow ?? now;
  // The demo's faults that are on, read each time the palette opens: it offers each one's way back.
  const [demoFaults, setDemoFaults] = useState<DemoFaultState[]>([]);
  const liveDemo = host.kind === 'demo' && !review;
  useEffect(() => {
    if (!ui.paletteOpen || !liveDemo) return;
    let current = true;
    api
      .getDemoFaults({ deploymentId: deployment.id })
      .then((r) => current && setDemoFaults(r.faults))
      .catch((err: unknown) => current && window.alert(errorText(err).message));
    return () => {
      current = false;
    };
  }, [ui.paletteOpen, liveDemo, deployment.id]);
  const close = (): void => {
    void api.closeDeployment({ deploymentId: deployment.id }).finally(() => removeDeployment(deployment.id));
  };
  const commands = useMemo<Command[]>(() => {
    const cmds: Command[] = [
      {
        id: 'go-overview',
        title: 'Go to overview (pipeline)',
        hint: 'o',
        run: () => navigate({ name: 'overview' }),
      },
      { id: 'go-kv', title: 'Go to KV cache', hint: 'k', run: () => navigate({ name: 'kv' }) },
      {
        id: 'go-metrics',
        title: 'Go to metrics panels (latency, throughput, GPUs)',
        hint: 'm',
        run: () => navigate({ name: 'metrics' }),
      },
      {
        id: 'go-alerts',
        title: 'Go to alerts and rules',
        hint: 'a',
        run: () => navigate({ name: 'alerts' }),
      },
      // Each role's page (one service's own page, or the role's workers), then each worker of a role of several.
      ...roleCommands(deployment.services),
      // Live only: a review has its own ranges (the session, around the cursor) and no live to go back to.
      ...(review
        ? []
        : [
            ...RANGES.map((r, i) => ({
              id: `range-${r.id}`,
              title: `Show the last ${r.label}`,
              hint: String(i + 1),
              run: () => setRange(r.id),
            })),
            { id: 'live', title: 'Back to live', hint: 'l', run: backToLive },
          ]),
      { id: 'theme-light', title: 'Theme: light', run: () => applyTheme('light') },
      { id: 'theme-dark', title: 'Theme: dark', run: () => applyTheme('dark') },
      { id: 'theme-system', title: 'Theme: follow the system', run: () => applyTheme('system') },
      {
        id: 'notify',
        title: 'Enable desktop notifications for alerts',
        run: () => void requestNotifications(),
      },
      { id: 'help', title: 'Keyboard shortcuts', hint: '?', run: () => setHelp(true) },
      { id: 'sessions', title: 'Recorded sessions (review, rename, export, delete)', run: openSessionsPage },
      { id: 'close', title: `Close ${deployment.name}`, run: close },
    ];
    // The demo's faults and eras act on the running demo, not on a recording of it.
    if (host.kind === 'demo' && !review) {
      cmds.push(
        ...demoFaultCommands(deployment, fleet, demoFaults).map((c) => ({
          id: c.id,
          title: c.title,
          run: () =>
            void (async () => {
              for (const r of c.requests)
                setDemoFaults((await api.demoControl({ deploymentId: deployment.id, ...r })).faults);
            })().catch((err: unknown) => window.alert(errorText(err).message)),
        })),
      );
      // The demo cannot change era while it runs: close it and open it again with the chosen one.
      const reopen = (eras: OpenDemoArgs) => () => {
        demoEras = { ...demoEras, ...eras };
        void api
          .closeDeployment({ deploymentId: deployment.id })
          .then(() => {
            removeDeployment(deployment.id);
            // A fleet reopens as a fleet: the era changes, the topology does not.
            return api.openDemo(fleet ? { ...demoEras, topology: 'fleet' } : demoEras);
          })
          .then((d) => addDeployment(d))
          .catch((err: unknown) => window.alert(errorText(err).message));
      };
      cmds.push(
        ...DEMO_SERVER_ERAS.map((era) => ({
          id: `demo-era-${era}`,
          title: `Demo: reopen as ${DEMO_SERVER_ERA_LABEL[era]}`,
          run: reopen({ era }),
        })),
        ...DEMO_ROUTER_ERAS.map((router) => ({
          id: `demo-router-${router}`,
          title: `Demo: reopen with router ${DEMO_ROUTER_ERA_LABEL[router]}`,
          run: reopen({ router }),
        })),
      );
    }
    return cmds;
    // eslint-disable-next-line react-hooks/exhaustive-deps -- commands depend only on the deployment's identity
  }, [deployment.id, host.kind, fleet, review, demoFaults]);
  const restartCommands = useRestartCommands(deployment);
  const page = ui.page;
  return (
    <main className="console" data-mode={review ? 'review' : 'live'}>
      <TopBar view={view} onClose={close} now={shownNow} />
      {review && <ReviewBar view={view} />}
      <ConnectionBanner view={view} now={shownNow} />
      {/* One history request per page and window: the page's charts ask through its own batcher. */}
      <SeriesBatchProvider key={pageHash(page)}>
        <HistoryPageNotice />
        {page.name === 'overview' && <Overview view={view} now={shownNow} />}
        {page.name === 'kv' && <KvPage view={view} />}
        {page.name === 'metrics' && <MetricsPage view={view} />}
        {page.name === 'alerts' && <AlertsPage view={view} />}
        {page.name === 'service' && <RolePage view={view} role={page.role} now={shownNow} />}
        {page.name === 'worker' && <WorkerPage view={view} id={page.id} now={shownNow} />}
      </SeriesBatchProvider>
      <AroundDrawer deploymentId={deployment.id} />
      {!review && <RestartLayer deploymentId={deployment.id} />}
      <CommandPalette commands={[...commands, ...(review ? reviewCommands(view) : restartCommands)]} />
    </main>
  );
}

function roleCommands(services: readonly ServiceConfig[]): Command[] {
  const roles = [...new Set(services.map((s) => s.role))];
  return roles.flatMap((role) => {
    const mine = services.filter((s) => s.role === role);
    const one = mine.length === 1 ? mine[0] : undefined;
    return [
      {
        id: `go-service-${role}`,
        title: one
          ? `Open ${role} service: systemd, journal (${one.unit})`
          : `Open the ${mine.length} ${role} workers`,
        hint: role[0],
        run: () => navigate({ name: 'service', role }),
      },
      ...(one
        ? []
        : mine.map((s) => ({
            id: `go-worker-${serviceId(s)}`,
            title: `Open ${role} ${serviceId(s)} on ${s.hostId} (${s.unit})`,
            run: () => navigate({ name: 'worker', id: serviceId(s) }),
          }))),
    ];
  });
}
