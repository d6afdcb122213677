// Every periodic read of a host is the monitor's: a restart waits on the monitor's scrapes of the router and the
// worker instead of scraping their /metrics itself. Every scrape made while restarts run is checked for who
// made it, over a decode restart (the router step reads the router's worker health), a stack restart (the
// router's readiness step) and a roll of the decode role (the router's view before and after the worker).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openFixture, stepOf, type Fixture } from './demo-fixture';
import { nextObservation } from '../support/demo-core';
import type { RollOperation } from '../../src/shared/contract';
import { RollService } from '../../src/main/core/services/roll';
import { rollDeploymentsOf } from '../../src/main/core/services/roll-deployments';

const callers = vi.hoisted(() => [] as string[]);

vi.mock('../../src/main/core/probes/metrics', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/main/core/probes/metrics')>();
  return {
    ...real,
    scrapeMetrics: (...args: Parameters<typeof real.scrapeMetrics>) => {
      // The frame below this wrapper is the caller: the monitor, or someone scraping behind its back.
      const frame = new Error().stack?.split('\n')[2] ?? '';
      callers.push(frame.includes('deployment-monitor') ? 'monitor' : frame.trim());
      return real.scrapeMetrics(...args);
    },
  };
});

let f: Fixture | undefined;
afterEach(async () => {
  await f?.stop();
  f = undefined;
});

describe('restarts read the services through the monitor', () => {
  it('a decode restart, a stack restart and a roll make no /metrics scrape of their own', async () => {
    f = await openFixture();
    const fx = f;
    await nextObservation(
      fx.core,
      (o) => o.services.every((s) => s.systemd) && o.services.every((s) => s.metrics?.ok),
      15_000,
    );
    callers.length = 0;
    for (const target of ['decode', 'stack'] as const) {
      const { operation } = await fx.restart.startRestart({ deploymentId: fx.deploymentId, target });
      const end = await fx.restart.whenDone(operation.id);
      expect(end.state, JSON.stringify(end.failure)).toBe('succeeded');
      const routerStep = stepOf(end, target === 'stack' ? 'router' : 'decode', 'router');
      expect(routerStep.state).toBe('succeeded');
    }
    const roll = new RollService(
      fx.core,
      fx.restart,
      rollDeploymentsOf(
        fx.core.deployments,
        () => fx.clock,
        (id) => fx.restart.scrapesOf(id),
      ),
      { pollMs: 1000, minRealGapMs: 20, userName: () => 'tester' },
    );
    try {
      const ended = new Promise<RollOperation>((resolve) =>
        fx.core.on('rollProgress', ({ operation }) => {
          if (operation.state !== 'running' && operation.state !== 'paused') resolve(operation);
        }),
      );
      await roll.startRoll({ deploymentId: fx.deploymentId, target: { kind: 'role', role: 'decode' } });
      const end = await ended;
      expect(end.state, end.summary).toBe('succeeded');
      expect(end.workers[0].steps.find((s) => s.kind === 'router')?.state).toBe('succeeded');
    } finally {
      roll.dispose();
    }
    expect(callers.length).toBeGreaterThan(0);
    expect(callers.filter((c) => c !== 'monitor')).toEqual([]);
  }, 120_000);
});
