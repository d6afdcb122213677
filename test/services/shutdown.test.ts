// App shutdown ends everything the services started: after app.shutdown() the process has nothing left to
// wait for and exits by itself, and the session's recording is closed cleanly (not "interrupted").
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SessionStore } from '../../src/main/core/recording';

const root = join(__dirname, '..', '..');

describe('app shutdown', () => {
  it('leaves no timer, socket or follower running, and closes the recording', async () => {
    const proc = spawn(
      process.execPath,
      ['--import', 'tsx', join(root, 'test', 'fixtures', 'shutdown-app.ts')],
      {
        cwd: root,
        env: { ...process.env, TSX_TSCONFIG_PATH: join(root, 'tsconfig.node.json') },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve) => proc.on('exit', resolve));
    // The core's timers are unref'd (they never hold a process open), so count them: none may be left.
    expect(out).toMatch(/shutdown done \S+ timers=0$/m);
    expect(out).not.toMatch(/still alive/);
    expect(code).toBe(0);
    const dataDir = /shutdown done (\S+) /.exec(out)![1];
    const recordings = join(dataDir, 'recordings');
    expect(readdirSync(recordings).length).toBeGreaterThan(0);
    const sessions = await new SessionStore(recordings).list();
    expect(sessions).toHaveLength(1);
    expect(sessions[0].state).toBe('complete');
  }, 60_000);
});
