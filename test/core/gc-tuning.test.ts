// The core's GC trigger flags: set on a V8 that has them, left alone when PD_CONSOLE_GC_TUNING=0 or on an older
// V8, and known to the V8 this runs on (an unknown flag is only a warning on stderr, so a Node that dropped
// them would silently measure V8's own trigger again). What they buy is measured by `npm run bench -- gc-tuning`.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { GC_TUNING_FLAGS, tuneGarbageCollector } from '../../src/main/gc-tuning';

describe('tuneGarbageCollector', () => {
  it('sets the incremental-marking triggers, once each', () => {
    const set: string[] = [];
    expect(tuneGarbageCollector({}, '11.3.244.8-node.38', (f) => set.push(f))).toEqual(GC_TUNING_FLAGS);
    expect(set).toEqual(['--incremental-marking-soft-trigger=75', '--incremental-marking-hard-trigger=90']);
  });

  it('sets nothing when PD_CONSOLE_GC_TUNING=0, or on a V8 before 11', () => {
    const set: string[] = [];
    expect(tuneGarbageCollector({ PD_CONSOLE_GC_TUNING: '0' }, '13.6.233.17', (f) => set.push(f))).toEqual(
      [],
    );
    expect(tuneGarbageCollector({}, '10.2.154.26', (f) => set.push(f))).toEqual([]);
    expect(set).toEqual([]);
  });

  it('uses flags this V8 knows: setting them prints no "unrecognized flag"', () => {
    const script = `require('node:v8').setFlagsFromString(${JSON.stringify(GC_TUNING_FLAGS.join(' '))});`;
    const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(run.stderr).toBe('');
    // And the check can fail: a flag this V8 does not have is reported on stderr.
    const bad = spawnSync(
      process.execPath,
      ['-e', `require('node:v8').setFlagsFromString('--no-such-gc-flag=1');`],
      {
        encoding: 'utf8',
      },
    );
    expect(bad.stderr).toMatch(/unrecognized flag/);
  });
});
