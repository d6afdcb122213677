// Conditions as systemd means them, from the states real systemd 252 reports (see test/real-systemd): a crash loop
// with a short RestartSec reads active/running most of the time; a Type=simple server is active while it loads.
import { describe, expect, it } from 'vitest';
import type { ServiceObservation, UnitState } from '@shared/domain';
import type { UnitJournalEvidence } from '@shared/domain';
import { serviceCondition, unitCondition } from '@shared/unit-condition';

const NOW = Date.UTC(2026, 11, 6, 8, 0, 0);
const min = 60_000;

function state(over: Partial<UnitState>): UnitState {
  return {
    unit: 'dsv4-decode.service',
    loadState: 'loaded',
    activeState: 'active',
    subState: 'running',
    mainPid: 40,
    nRestarts: 0,
    activeEnterTimestamp: NOW - 3 * min,
    result: 'success',
    execMainCode: 0,
    execMainStatus: 0,
    restartPolicy: 'on-failure',
    stateChangeTimestamp: NOW - 3 * min,
    execMainStartTimestamp: NOW - 3 * min,
    inactiveEnterTimestamp: null,
    ...over,
  };
}

const ev = (over: Partial<UnitJournalEvidence> = {}): UnitJournalEvidence => ({ loadsMs: [], ...over });
const healthy = { ok: true, status: 200, detail: '200 OK', checkedAt: NOW };
const refused = { ok: false, detail: 'connection refused', checkedAt: NOW };

describe('unitCondition', () => {
  it('a crash loop that is active/running between crashes, with the exit status and the error', () => {
    const c = unitCondition({
      role: 'decode',
      systemd: state({
        nRestarts: 4,
        inactiveEnterTimestamp: NOW - 2000,
        execMainStartTimestamp: NOW - 1000,
      }),
      health: refused,
      evidence: ev({
        lastExit: { ts: NOW - 2000, code: 'exited', status: '1/FAILURE', text: '' },
        lastError: { ts: NOW - 2100, text: 'ImportError: libcudart.so.12: cannot open shared object file' },
      }),
      now: NOW,
    });
    expect(c.kind).toBe('crash-looping');
    expect(c.text).toBe(
      'crash-looping: restart 4, exit status 1 (ImportError: libcudart.so.12: cannot open shared object file)',
    );
    expect(c.nextStep).toContain('systemctl stop dsv4-decode.service');
  });

  it('a loop is over once the process running now answers /health: serving, its restarts noted', () => {
    const looped = {
      role: 'decode' as const,
      evidence: ev({
        lastExit: { ts: NOW - 60_000, code: 'killed' as const, status: '9/KILL', text: '' },
        lastError: {
          ts: NOW - 60_100,
          text: 'RuntimeError: CUDA error: an illegal memory access was encountered',
        },
      }),
      now: NOW,
    };
    const systemd = state({
      nRestarts: 3,
      execMainStartTimestamp: NOW - 50_000,
      inactiveEnterTimestamp: NOW - 60_000,
    });
    const back = unitCondition({ ...looped, systemd, health: { ...healthy, checkedAt: NOW - 1000 } });
    expect(back.kind).toBe('serving');
    expect(back.text).toBe('running, healthy; restarted automatically 3 times');
    // An ok read before this process started is the previous one's: still the loop.
    const stale = unitCondition({ ...looped, systemd, health: { ...healthy, checkedAt: NOW - 55_000 } });
    expect(stale.kind).toBe('crash-looping');
  });

  it("a loop is over by the answering process's pid, whatever the host's clock says", () => {
    // The host's clock runs 10 min ahead of this console's: its start and exit times are "in the future".
    const ahead = 10 * min;
    const looped = {
      role: 'decode' as const,
      evidence: ev({
        lastExit: { ts: NOW + ahead - 60_000, code: 'killed' as const, status: '9/KILL', text: '' },
      }),
      now: NOW,
    };
    const systemd = state({
      mainPid: 4242,
      nRestarts: 3,
      execMainStartTimestamp: NOW + ahead - 50_000,
      inactiveEnterTimestamp: NOW + ahead - 60_000,
    });
    const answered = { ...healthy, checkedAt: NOW - 1000 };
    expect(unitCondition({ ...looped, systemd, health: { ...answered, mainPid: 4242 } }).kind).toBe(
      'serving',
    );
    // The previous process's answer does not end it.
    expect(unitCondition({ ...looped, systemd, health: { ...answered, mainPid: 4100 } }).kind).toBe(
      'crash-looping',
    );
  });

  it('between restarts (activating/auto-restart) counts the restart that is coming', () => {
    const c = unitCondition({
      role: 'decode',
      systemd: state({
        activeState: 'activating',
        subState: 'auto-restart',
        nRestarts: 3,
        execMainCode: 1,
        execMainStatus: 1,
      }),
      now: NOW,
    });
    expect(c.text).toBe('crash-looping: restart 4, exit status 1');
  });

  it('failed with Restart=no, and why', () => {
    const c = unitCondition({
      role: 'decode',
      systemd: state({
        activeState: 'failed',
        subState: 'failed',
        result: 'exit-code',
        execMainCode: 1,
        execMainStatus: 1,
        restartPolicy: 'no',
      }),
      evidence: ev({ lastError: { ts: NOW - 5000, text: 'RuntimeError: CUDA error: out of memory' } }),
      now: NOW,
    });
    expect(c.text).toBe('failed (exit status 1, Restart=no) (RuntimeError: CUDA error: out of memory)');
  });

  it('failed after systemd gave up (start limit): said from the journal, as systemd 252 keeps Result=exit-code', () => {
    const failed = state({
      activeState: 'failed',
      subState: 'failed',
      result: 'exit-code',
      execMainCode: 1,
      execMainStatus: 1,
      nRestarts: 5,
    });
    const lastExit = { ts: NOW - 3000, code: 'exited' as const, status: '1/FAILURE', text: '' };
    const gaveUp = unitCondition({
      role: 'decode',
      systemd: failed,
      evidence: ev({ lastExit, startLimitAt: NOW - 2900 }),
      now: NOW,
    });
    expect(gaveUp.text).toBe('failed (systemd gave up after 5 restarts (start limit))');
    expect(gaveUp.nextStep).toContain('sudo systemctl reset-failed dsv4-decode.service');
    // A refusal from before the last run's exit is an old one: the unit failed by itself since.
    const since = unitCondition({
      role: 'decode',
      systemd: failed,
      evidence: ev({ lastExit, startLimitAt: NOW - 60_000 }),
      now: NOW,
    });
    expect(since.text).toBe('failed (exit status 1)');
    expect(since.nextStep).not.toContain('reset-failed');
  });

  it('stopped by an operator (SIGTERM from a stop job) and exited on its own are told apart', () => {
    const stopped = unitCondition({
      role: 'router',
      systemd: state({ activeState: 'inactive', subState: 'dead', execMainCode: 2, execMainStatus: 15 }),
      now: NOW,
    });
    expect(stopped.text).toBe('stopped by an operator');
    const exited = unitCondition({
      role: 'router',
      systemd: state({ activeState: 'inactive', subState: 'dead', execMainCode: 1, execMainStatus: 0 }),
      now: NOW,
    });
    expect(exited.text).toBe('exited on its own (status 0)');
  });

  it('active but not answering while its model loads, against the last load', () => {
    const c = unitCondition({
      role: 'decode',
      systemd: state({}),
      health: refused,
      evidence: ev({ startedAt: NOW - 3 * min, loadsMs: [4 * min] }),
      now: NOW,
    });
    expect(c.kind).toBe('loading');
    expect(c.text).toBe('running, model loading (3 min, last load took 4 min)');
  });

  it('loading far longer than the last load is not called loading', () => {
    const c = unitCondition({
      role: 'decode',
      systemd: state({ execMainStartTimestamp: NOW - 30 * min }),
      health: refused,
      evidence: ev({ startedAt: NOW - 30 * min, loadsMs: [4 * min] }),
      now: NOW,
    });
    expect(c.kind).toBe('not-answering');
    expect(c.text).toBe(
      'running but /health fails: connection refused — 30 min since start, last load took 4 min',
    );
  });

  it('serving, with automatic restarts said', () => {
    expect(unitCondition({ role: 'decode', systemd: state({}), health: healthy, now: NOW }).text).toBe(
      'running, healthy',
    );
    expect(
      unitCondition({
        role: 'decode',
        systemd: state({ nRestarts: 1, inactiveEnterTimestamp: NOW - 60 * min }),
        health: healthy,
        now: NOW,
      }).text,
    ).toBe('running, healthy; restarted automatically once');
  });
  it('ready by its journal but /health not asked since this process started: not known yet, never "fails"', () => {
    const started = NOW - 2000;
    const c = unitCondition({
      role: 'decode',
      systemd: state({ execMainStartTimestamp: started, activeEnterTimestamp: started }),
      evidence: ev({ readyAt: NOW - 500, loadsMs: [60_000] }),
      now: NOW,
    });
    expect(c).toMatchObject({ kind: 'unknown', tone: 'muted', text: 'running, /health not checked yet' });
    const failing = unitCondition({
      role: 'decode',
      systemd: state({ execMainStartTimestamp: started, activeEnterTimestamp: started }),
      health: refused,
      evidence: ev({ readyAt: NOW - 500, loadsMs: [60_000] }),
      now: NOW,
    });
    expect(failing.kind).toBe('not-answering');
    expect(failing.text).toContain('running but /health fails: connection refused');
  });
  it('a router not ready while no decode serves is waiting for decode, not "stuck loading or wedged"', () => {
    const notReady = { ok: false, status: 503, detail: '503 — not ready', checkedAt: NOW };
    const svc = (
      role: ServiceObservation['role'],
      over: Partial<ServiceObservation>,
    ): ServiceObservation => ({
      role,
      unit: `sglang-${role}.service`,
      systemd: state({ unit: `sglang-${role}.service` }),
      ...over,
    });
    const router = svc('router', { health: notReady });
    const prefill = svc('prefill', { health: healthy });
    const stopping = svc('decode', {
      systemd: state({ activeState: 'deactivating', subState: 'stop-sigterm' }),
    });
    const waiting = serviceCondition(router, [router, prefill, stopping], NOW);
    expect(waiting).toMatchObject({
      kind: 'not-answering',
      tone: 'warn',
      text: 'running, not ready while no decode service serves (503 — not ready)',
      nextStep: 'see decode: the router is ready again once it serves',
    });
    // Every role it routes to serves: its failing readiness is its own.
    const serving = svc('decode', { health: healthy });
    const own = serviceCondition(router, [router, prefill, serving], NOW);
    expect(own).toMatchObject({ kind: 'not-answering', tone: 'bad' });
    expect(own.text).toContain('running but /health fails: 503 — not ready');
  });
});
