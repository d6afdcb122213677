// The verdict as the dashboard builds it, over the demo host running faster than real time (the core polls on the
// demo's own clock, so systemd's, /health's and the journal's times agree): decode crash-loops and comes back, then
// the operator restarts it. Every round's verdict is recorded; the test asserts what it said at each stage and that
// no round in between blamed the router for decode's outage or for the operator's restart.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { acceleratedClock, type Clock } from '../../src/main/core/clock';
import { Core } from '../../src/main/core/core';
import { RestartService } from '../../src/main/core/services/restart';
import { DashboardService } from '../../src/main/core/services/dashboard';
import { startDemoHost, type DemoHost } from '../../src/main/demo';
import { standardDeployment } from '../../src/main/compose';
import type { Verdict } from '../../src/shared/contract';

const SPEED = 8;

let clock: Clock;
let demo: DemoHost;
let core: Core;
let restart: RestartService;
let deploymentId: string;
/** Every round's verdict, in order. */
const rounds: Array<{ ts: number; verdict: Verdict }> = [];

beforeAll(async () => {
  clock = acceleratedClock(SPEED);
  // A 30 s model load (90 s by default): the crash loop and the restart come round three times sooner.
  demo = await startDemoHost({ clock, seed: 11, modelLoadMs: 30_000 });
  core = new Core({
    shell: 'cli',
    version: 'test',
    clock,
    intervalMs: 1000,
    demo: async () => ({
      ...demo,
      deployment: standardDeployment({ id: 'demo', label: 'demo', kind: 'demo' }),
    }),
  });
  // The dashboard hears the deployment open and pushes each round's snapshot on the core's bus.
  new DashboardService(core);
  restart = new RestartService(core, {
    clockFor: () => clock,
    pollMs: 1000,
    minRealGapMs: 20,
    userName: () => 'tester',
  });
  // A window listens: every round's snapshot is built and pushed, as in the app.
  core.on('dashboard', (p) => {
    rounds.push({ ts: p.ts, verdict: p.verdict });
  });
  deploymentId = (await core.openDemo({})).deployment.id;
}, 60_000);

afterAll(async () => {
  restart?.dispose();
  await core?.shutdown();
  await demo?.stop();
});

/** The first round's verdict from now on that satisfies `pred`, within `realMs` of real time. */
function verdictWhere(pred: (v: Verdict) => boolean, realMs: number, what: string): Promise<Verdict> {
  const from = rounds.length;
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => {
      core.off('dashboard', on);
      const seen = [...new Set(rounds.slice(from).map((r) => r.verdict.headline))].slice(-8);
      reject(new Error(`no verdict ${what} within ${realMs} ms; the last ones:\n${seen.join('\n')}`));
    }, realMs);
    const on = (): void => {
      const v = rounds.at(-1)?.verdict;
      if (!v || !pred(v)) return;
      clearTimeout(t);
      core.off('dashboard', on);
      resolve(v);
    };
    core.on('dashboard', on);
  });
}

const blamesRouter = (v: Verdict): boolean =>
  v.kind === 'router-bound' || /router is failing/.test(v.headline);

it('decode crash-loops and comes back, then is restarted by the operator: each stage named, the router never blamed', async () => {
  await verdictWhere((v) => v.kind === 'healthy' || v.kind === 'idle', 30_000, 'healthy at start');

  demo.sim.setFault('crash-loop', true, 'decode');
  const crashStart = rounds.length;
  const down = await verdictWhere(
    (v) => v.kind === 'service-down' && /crash-looping/.test(v.headline),
    30_000,
    'saying decode crash-loops',
  );
  expect(down.headline).toMatch(
    /^Requests cannot flow: decode is not serving — crash-looping: restart \d+, exit status \w+ \(RuntimeError: CUDA error: an illegal memory access was encountered\)\.$/,
  );
  expect(down.nextStep).toBe(
    'decode: open the journal at the crash; `systemctl stop sglang-decode.service` ends the loop',
  );

  demo.sim.setFault('crash-loop', false, 'decode');
  const back = await verdictWhere((v) => v.kind === 'recovering', 60_000, 'recovering');
  expect(back.headline).toMatch(/^Recovering: decode was down until \d\d:\d\d:\d\d; /);
  expect(back.nextStep).toMatch(
    /^it came back by itself: read why it went down in its journal at \d\d:\d\d:\d\d$/,
  );
  // Until the standard window no longer holds the outage: then the verdict reads the deployment again.
  await verdictWhere((v) => v.kind !== 'recovering', 60_000, 'past the recovery');
  const crashRounds = rounds.slice(crashStart);
  expect(crashRounds.filter((r) => blamesRouter(r.verdict)).map((r) => r.verdict.headline)).toEqual([]);

  const restartStart = rounds.length;
  const started = await restart.handlers().startRestart({ deploymentId, target: 'decode', drain: false });
  const during = await verdictWhere((v) => v.kind === 'restarting', 30_000, 'restarting');
  expect(during.headline).toBe('decode is being restarted by you; requests wait until it is back.');
  expect(during.nextStep).toMatch(/^nothing to do while the restart runs/);
  const after = await verdictWhere((v) => v.kind === 'recovering', 90_000, 'recovering after the restart');
  expect(after.headline).toMatch(/^Recovering: decode was being restarted by you until \d\d:\d\d:\d\d; /);
  expect((await restart.handlers().getRestart({ operationId: started.operation.id })).state).not.toBe(
    'failed',
  );
  await verdictWhere((v) => v.kind !== 'recovering', 60_000, 'past the restart');
  const restartRounds = rounds.slice(restartStart);
  expect(restartRounds.filter((r) => blamesRouter(r.verdict)).map((r) => r.verdict.headline)).toEqual([]);
  // Every round said why and what next.
  for (const r of rounds) {
    expect(r.verdict.evidence.length, r.verdict.headline).toBeGreaterThan(0);
    expect(r.verdict.nextStep.length, r.verdict.headline).toBeGreaterThan(0);
  }
}, 240_000);
