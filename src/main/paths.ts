// Where the app keeps its files. PD_CONSOLE_DATA_DIR overrides everything (tests, portable setups);
// otherwise the platform's conventional per-user data folder. The Electron shell passes app.getPath('userData').
import { homedir } from 'node:os';
import { join } from 'node:path';

export function dataDir(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string {
  if (env.PD_CONSOLE_DATA_DIR) return env.PD_CONSOLE_DATA_DIR;
  const home = homedir();
  if (platform === 'darwin') return join(home, 'Library', 'Application Support', 'PD Console');
  if (platform === 'win32') return join(env.APPDATA ?? join(home, 'AppData', 'Roaming'), 'PD Console');
  return join(env.XDG_DATA_HOME ?? join(home, '.local', 'share'), 'pd-console');
}
