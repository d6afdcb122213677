// Everything restart draws above the pages (dialog, progress, settings), and the palette commands. Mounted
// once per open deployment by the console.
import { useEffect } from 'react';
import type { DeploymentConfig } from '@shared/domain';
import type { Command } from '../components/CommandPalette';
import { RestartDialog } from './RestartDialog';
import { RestartProgress } from './RestartProgress';
import { RestartSettingsPanel } from './RestartSettingsPanel';
import {
  actionsAllowed,
  loadRestarts,
  openRestartDialog,
  openRestartSettings,
  runningFor,
  showRestart,
  useRestartState,
} from './useRestart';

export function RestartLayer({ deploymentId }: { deploymentId: string }): React.JSX.Element | null {
  const s = useRestartState();
  useEffect(() => {
    void loadRestarts(deploymentId);
  }, [deploymentId]);
  const shown = s.shown ? s.ops[s.shown] : undefined;
  return (
    <>
      {s.dialog?.deploymentId === deploymentId && actionsAllowed(s) && (
        <RestartDialog key={s.dialog.target} deploymentId={deploymentId} initialTarget={s.dialog.target} />
      )}
      {shown?.deploymentId === deploymentId && <RestartProgress op={shown} />}
      {s.settingsOpen && s.settings && <RestartSettingsPanel settings={s.settings} />}
    </>
  );
}

/** Palette commands: restart each service or the stack, follow a running restart, settings. */
export function useRestartCommands(deployment: DeploymentConfig): Command[] {
  const s = useRestartState();
  const running = runningFor(s, deployment.id);
  const cmds: Command[] = [];
  if (running)
    cmds.push({
      id: 'restart-show',
      title: `Show the running restart (${running.summary})`,
      run: () => showRestart(running.id),
    });
  // Settings stay reachable in read-only mode: that is where it is switched off.
  cmds.push({
    id: 'restart-settings',
    title: 'Restart settings (read-only, order, timeouts)…',
    run: () => openRestartSettings(true),
  });
  if (!actionsAllowed(s)) return cmds;
  // A fleet's role is many workers: the one-service restart below would touch one of them. Until the screens
  // drive the rolling restart, the palette hands over the CLI's (one worker at a time, checks enforced).
  if (deployment.services.some((x) => x.id !== undefined)) {
    const origin = deployment.services[0]?.hostId ?? 'HOST';
    for (const role of [...new Set(deployment.services.map((x) => x.role))]) {
      const line = `pd-console restart ${role} --host ${origin}`;
      cmds.push({
        id: `restart-fleet-${role}`,
        title: `Rolling restart of every ${role} worker: copy "${line}" (the screens do not restart fleet workers yet)`,
        run: () =>
          void navigator.clipboard.writeText(line).catch(() => window.prompt('Copy this line:', line)),
      });
    }
    return cmds;
  }
  for (const svc of deployment.services)
    cmds.push({
      id: `restart-${svc.role}`,
      title: `Restart ${svc.role}… (${svc.unit})`,
      run: () => openRestartDialog(deployment.id, svc.role),
    });
  cmds.push({
    id: 'restart-stack',
    title: 'Restart PD stack… (prefill + decode, then router)',
    run: () => openRestartDialog(deployment.id, 'stack'),
  });
  return cmds;
}
