// The app every `pd-console` verb runs on: the one createApp builds for the desktop and browser shells (the same
// services, the same handlers the renderer's channel map calls), with the CLI's shell options; ended through
// app.shutdown(), the services' disposers, whatever the verb's outcome. A caller's app (tests) is used as it is
// and left open: its owner shuts it down.
import { createApp, type App, type AppOptions } from '../compose';

export interface CliAppDeps {
  /** Used instead of a new app, and left open. */
  app?: App;
  /** Builds the verb's app (tests wrap createApp to watch it); default createApp. */
  openApp?: (opts: AppOptions) => App;
}

/** What a one-shot command asks of the app: the CLI shell (no prompts, no recording), a poll each second. */
const CLI_APP: AppOptions = { shell: 'cli', intervalMs: 1000 };

export async function withApp<T>(
  deps: CliAppDeps,
  opts: Partial<AppOptions>,
  verb: (app: App) => Promise<T>,
): Promise<T> {
  if (deps.app) return verb(deps.app);
  const app = (deps.openApp ?? createApp)({ ...CLI_APP, ...opts });
  try {
    return await verb(app);
  } finally {
    await app.shutdown();
  }
}
