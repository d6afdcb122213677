import { describe, expect, it } from 'vitest';
import { Semaphore } from '../../src/main/core/ssh/semaphore';

describe('Semaphore', () => {
  it('never lets more than `limit` tasks run at once and runs them all', async () => {
    const s = new Semaphore(3);
    let running = 0;
    let peak = 0;
    const task = async (i: number): Promise<number> => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, 5 + (i % 3)));
      running--;
      return i;
    };
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => s.run(() => task(i))));
    expect(results).toEqual(Array.from({ length: 12 }, (_, i) => i));
    expect(peak).toBe(3);
    expect(s.inUse).toBe(0);
  });

  it('releases the slot when a task throws', async () => {
    const s = new Semaphore(1);
    await expect(s.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(s.run(async () => 'ok')).resolves.toBe('ok');
  });

  it('a held slot (a channel that stays open) counts until released, and releasing twice frees it once', async () => {
    const s = new Semaphore(2);
    const release = await s.hold();
    await s.hold();
    let ran = false;
    const waiting = s.run(async () => (ran = true));
    await new Promise((r) => setTimeout(r, 10));
    expect(ran).toBe(false);
    release();
    release();
    await waiting;
    expect(ran).toBe(true);
    expect(s.inUse).toBe(1);
  });
});
