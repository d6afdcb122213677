// One subscription to the core's `signals` events, fanned out to the charts that asked for keys. Charts
// append points themselves (no React render per second), which keeps a live update to one push + draw.
import { api } from '../api/client';

type Listener = (ts: number, values: Record<string, number | null>) => void;
const byDeployment = new Map<string, Set<Listener>>();
let wired = false;

function dispatch(deploymentId: string, ts: number, values: Record<string, number | null>): void {
  for (const f of byDeployment.get(deploymentId) ?? []) f(ts, values);
}

export function onSignals(deploymentId: string, l: Listener): () => void {
  if (!wired) {
    wired = true;
    api.on('signals', (e) => dispatch(e.deploymentId, e.ts, e.values));
  }
  let set = byDeployment.get(deploymentId);
  if (!set) byDeployment.set(deploymentId, (set = new Set()));
  set.add(l);
  return () => set.delete(l);
}
