// `npm run bench`: every benchmark, one after the other, each printing its figures and ratios side by side.
// Pass names to run a subset: `npm run bench -- parser recording`.
import { runParserBench } from './parser';
import { runRecordingBench } from './recording';
import { runDashboardBench } from './dashboard';
import { runReviewBench } from './review';
import { runEvaluatorBench } from './evaluator';
import { runHostileInputBench } from './hostile-input';
import { runChannelsBench } from './channels';
import { runCoreCpuBench } from './core-cpu';
import { runCoreCpuStagesBench } from './core-cpu-stages';
import { runHostReadsBench } from './host-reads';
import { runPromHistoryBench } from './prom-history';
import { runFleetScaleBench } from './fleet-scale';
import { runFleetStagesBench } from './fleet-stages';
import { runWindowPushBench } from './window-push';
import { runGcTuningBench } from './gc-tuning';
import { runOlderHistoryBench } from './older-history';
import { runRouterWorkersBench } from './router-workers';
import { runWebSlowClientBench } from './web-slow-client';

const BENCHES: Record<string, () => Promise<void>> = {
  parser: () => runParserBench(),
  recording: () => runRecordingBench(),
  review: async () => {
    await runReviewBench();
  },
  evaluator: () => runEvaluatorBench(),
  dashboard: async () => {
    await runDashboardBench();
  },
  'hostile-input': async () => runHostileInputBench(),
  'core-cpu': () => runCoreCpuBench(),
  'core-cpu-stages': () => runCoreCpuStagesBench(),
  'host-reads': () => runHostReadsBench(),
  'prom-history': () => runPromHistoryBench(),
  channels: async () => {
    await runChannelsBench();
  },
  'fleet-scale': () => runFleetScaleBench(),
  'fleet-stages': () => runFleetStagesBench(),
  'window-push': () => runWindowPushBench(),
  'gc-tuning': () => runGcTuningBench(),
  'older-history': () => runOlderHistoryBench(),
  'router-workers': async () => runRouterWorkersBench(),
  'web-slow-client': () => runWebSlowClientBench(),
};

async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((w) => !(w in BENCHES));
  if (unknown.length) {
    process.stderr.write(`unknown bench ${unknown.join(', ')}; known: ${Object.keys(BENCHES).join(', ')}\n`);
    process.exit(2);
  }
  for (const [name, run] of Object.entries(BENCHES)) {
    if (wanted.length && !wanted.includes(name)) continue;
    process.stdout.write(`\n=== ${name} ===\n`);
    await run();
  }
}

void main().then(
  () => process.exit(0),
  (err: Error) => {
    process.stderr.write(`bench failed: ${err.stack ?? err.message}\n`);
    process.exit(1);
  },
);
