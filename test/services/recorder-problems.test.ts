// A recorder problem that is not about one live recording (old sessions that cannot be deleted, a file that
// cannot be closed) is no longer swallowed: it reaches every client in the recordingStatus event.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Core } from '../../src/main/core/core';
import { RecordingService } from '../../src/main/core/services/recording';
import type { RecordingStatus } from '../../src/shared/contract';

describe('recorder problems', () => {
  it('a retention failure is pushed to the UI with what failed and where', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pdc-recprob-'));
    const core = new Core({ shell: 'browser', version: 'test' });
    const rec = new RecordingService(core, {
      dir: join(dir, 'recordings'),
      exportDir: join(dir, 'exports'),
      appVersion: 'test',
    });
    // The disk refuses the deletion (as a read-only mount or a file held open on Windows would).
    rec.store.enforceRetention = async () => {
      throw new Error('EROFS: read-only file system, unlink');
    };
    const pushed: RecordingStatus[] = [];
    core.on('recordingStatus', (s) => pushed.push(s));
    await rec.handlers().setRecordingSettings({ maxTotalBytes: 1024 });
    const last = pushed.at(-1)!;
    expect(last.problems).toHaveLength(1);
    expect(last.problems[0].message).toMatch(/retention limit: EROFS: read-only file system/);
    expect(last.problems[0].message).toContain(join(dir, 'recordings'));
    expect((await rec.handlers().getRecordingStatus({})).problems).toHaveLength(1);
  });
});
