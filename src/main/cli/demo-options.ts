// `--demo-era` and `--demo-router`: which metric eras the demo host runs, for the CLI and browser mode alike.
import {
  DEMO_ROUTER_ERAS,
  DEMO_SERVER_ERAS,
  type DemoRouterEra,
  type DemoServerEra,
} from '@shared/api/monitoring';

const OPTIONS: Array<[string, string]> = [
  [
    `--demo-era ${DEMO_SERVER_ERAS.join('|')}`,
    'SGLang server metric era of the demo host (default E4, newest)',
  ],
  [`--demo-router ${DEMO_ROUTER_ERAS.join('|')}`, 'router metric era of the demo host (default smg-1.5)'],
];

/** The two options for a usage text: each flag on its line, its meaning under it at `column`. */
export function demoEraHelp(column: number): string {
  return OPTIONS.map(([flag, what]) => `  ${flag}\n${' '.repeat(column)}${what}\n`).join('');
}

export interface DemoEraOptions {
  era?: DemoServerEra;
  router?: DemoRouterEra;
}

function pick<T extends string>(flag: string, value: unknown, valid: readonly T[]): T {
  if (typeof value === 'string' && (valid as readonly string[]).includes(value)) return value as T;
  const got = typeof value === 'string' ? JSON.stringify(value) : 'nothing';
  throw new Error(`${flag} must be one of ${valid.join(', ')}; got ${got}`);
}

/** Checks the two options (undefined = not given); an unknown name throws with the valid ones listed. */
export function demoEraOptions(era: unknown, router: unknown): DemoEraOptions {
  return {
    ...(era === undefined ? {} : { era: pick('--demo-era', era, DEMO_SERVER_ERAS) }),
    ...(router === undefined ? {} : { router: pick('--demo-router', router, DEMO_ROUTER_ERAS) }),
  };
}
