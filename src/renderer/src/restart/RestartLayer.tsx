// Everything restart draws above the pages (dialog, progress, settings), and the palette commands. Mounted
// once per open deployment by the console.
import { useEffect } from 'react';
import { serviceId, type DeploymentConfig } from '@shared/domain';
import type { Command } from '../components/CommandPalette';
import { RestartDialog } from './RestartDialog';
import { RestartProgress } from './RestartProgress';
import { RestartSettingsPanel } from './RestartSettingsPanel';
import { RollDialog } from './RollDialog';
import { RollProgress } from './RollProgress';
import { loadRolls, openRollDialog, runningRoll, showRoll, useRollState } from './useRoll';
import { hasWorkerGroups } from '@shared/fleet';
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
  const rolls = useRollState();
  useEffect(() => {
    void loadRestarts(deploymentId);
    // A deployment that cannot roll (a review) answers with an error; it simply has no rolls to show.
    loadRolls(deploymentId).catch(() => undefined);
  }, [deploymentId]);
  const shown = s.shown ? s.ops[s.shown] : undefined;
  const roll = rolls.shown ? rolls.rolls[rolls.shown] : undefined;
  return (
    <>
      {rolls.dialog?.deploymentId === deploymentId && actionsAllowed(s) && (
        <RollDialog
          key={JSON.stringify(rolls.dialog.target)}
          deploymentId={deploymentId}
          target={rolls.dialog.target}
        />
      )}
      {roll?.deploymentId === deploymentId && <RollProgress deploymentId={deploymentId} op={roll} />}
      {s.dialog?.deploymentId === deploymentId && actionsAllowed(s) && (
        <RestartDialog key={s.dialog.target} deploymentId={deploymentId} initialTarget={s.dialog.target} />
      )}
      {shown?.deploymentId === deploymentId && <RestartProgress op={shown} />}
      {s.settingsOpen && s.settings && <RestartSettingsPanel settings={s.settings} />}
    </>
  );
}

/** Palette commands: restart each service or the stack (a fleet: each worker, each role, the whole), settings. */
export function useRestartCommands(deployment: DeploymentConfig): Command[] {
  const s = useRestartState();
  const rolls = useRollState();
  const running = runningFor(s, deployment.id);
  const roll = runningRoll(rolls, deployment.id);
  const cmds: Command[] = [];
  if (roll)
    cmds.push({
      id: 'roll-show',
      title: `Show the running roll (${roll.summary})`,
      run: () => showRoll(roll.id),
    });
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
  if (hasWorkerGroups(deployment.services)) return [...cmds, ...rollCommands(deployment)];
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

function rollCommands(deployment: DeploymentConfig): Command[] {
  const cmds: Command[] = [];
  for (const role of ['prefill', 'decode'] as const)
    if (deployment.services.filter((x) => x.role === role).length > 1)
      cmds.push({
        id: `roll-${role}`,
        title: `Restart every ${role} worker, one at a time…`,
        run: () => openRollDialog(deployment.id, { kind: 'role', role }),
      });
  cmds.push({
    id: 'roll-deployment',
    title: 'Restart the whole deployment… (prefill, then decode, one at a time; routers last)',
    run: () => openRollDialog(deployment.id, { kind: 'deployment' }),
  });
  for (const svc of deployment.services)
    cmds.push({
      id: `roll-worker-${serviceId(svc)}`,
      title: `Restart ${serviceId(svc)}… (${svc.unit} on ${svc.hostId})`,
      run: () =>
        openRollDialog(deployment.id, {
          kind: 'worker',
          worker: svc.role === 'router' ? svc.unit : (svc.workerUrl ?? svc.unit),
        }),
    });
  return cmds;
}
