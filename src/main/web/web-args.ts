// The words `npm run web -- …` takes, declared once and read by the CLI's one parser (cli/cli-args.ts).
import { demoEraHelp, demoEraOptions, type DemoEraOptions } from '../cli/demo-options';
import { defineCommand, parseCommandLine, UsageError } from '../cli/cli-args';
import { MIN_MODEL_LOAD_MS } from '../demo/simulation';

const USAGE = `usage: npm run web -- [--demo] [--no-open] [--port N] [--demo-speed X] [--demo-model-load S]
       [--demo-era E] [--demo-router R]

  --demo          open the simulated demo deployment at start
  --no-open       do not open a browser; just print the URL
  --port N        listen on 127.0.0.1:N (default: a free port)
  --demo-speed X  run the demo host's clock X times faster than real time
  --demo-model-load S
                  the demo's decode servers load their model in S seconds (prefill in two thirds of
                  it; default 90, at least 20): restarts and crash loops come round sooner
${demoEraHelp(18)}
environment (for tests and automation):
  PD_CONSOLE_WEB_TOKEN  use this token instead of a new random one per run (at least 16 characters of
                        A-Z a-z 0-9 - _), so a restarted backend on the same --port takes back open pages
`;

export interface WebArgs {
  port: number;
  open: boolean;
  demo: boolean;
  demoSpeed?: number;
  /** ms */
  demoModelLoadMs?: number;
  demoEras: DemoEraOptions;
}

export const WEB_COMMAND = defineCommand({
  name: 'web',
  usage: USAGE,
  options: {
    demo: { type: 'boolean' },
    'no-open': { type: 'boolean' },
    port: { type: 'string', needs: 'a port number' },
    'demo-speed': { type: 'string', needs: 'a number' },
    'demo-model-load': { type: 'string', needs: 'a number of seconds' },
    'demo-era': { type: 'string', needs: 'a server era (see --help)' },
    'demo-router': { type: 'string', needs: 'a router era (see --help)' },
  },
});

/** The options, or 'help'; throws with what is wrong (a UsageError for the words themselves). */
export function parseWebArgs(argv: string[]): WebArgs | 'help' {
  const { values, positionals, help } = parseCommandLine(WEB_COMMAND, argv);
  if (help) return 'help';
  if (positionals.length) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const number = (flag: string, v: string | undefined): number | undefined => {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (v.trim() === '' || !Number.isFinite(n) || n < 0)
      throw new UsageError(`--${flag} needs a number, got ${JSON.stringify(v)}`);
    return n;
  };
  const modelLoad = (s: number | undefined): number | undefined => {
    if (s === undefined) return undefined;
    if (s * 1000 < MIN_MODEL_LOAD_MS)
      throw new UsageError(`--demo-model-load needs at least ${MIN_MODEL_LOAD_MS / 1000} seconds, got ${s}`);
    return s * 1000;
  };
  return {
    port: number('port', values.port) ?? 0,
    open: values['no-open'] !== true,
    demo: values.demo === true,
    demoSpeed: number('demo-speed', values['demo-speed']),
    demoModelLoadMs: modelLoad(number('demo-model-load', values['demo-model-load'])),
    demoEras: demoEraOptions(values['demo-era'], values['demo-router']),
  };
}
