// A recorded PD session in a recordings folder, as the recording service leaves it: the recording benchmark's
// queueing model (a decode crash with an alert, restart steps, journal lines) written with the real writer, its
// one-host deployment named as the recorder names it (a fleet of one: `decode@decode-0`); a session of format 1.1
// as that code wrote it (services named by role).
import { REVIEW_OVERVIEW } from '../../src/main/core/review/overview-table';
import { mkdir } from 'node:fs/promises';
import { SyntheticPdSession } from '../support/synthetic-pd-session';
import { SessionStore } from '../../src/main/core/recording';
import type { DeploymentConfig } from '../../src/shared/domain';
import { asOlderMinor, manualClock, oneHostByRole } from '../recording/helpers';
import { fleetOfOne } from '../../src/main/core/recording/fleet-of-one';

export const START = Date.UTC(2026, 0, 5, 8, 0, 0);

export const DEPLOYMENT: DeploymentConfig = oneHostByRole();

export interface WrittenSession {
  id: string;
  path: string;
  /** When the decode crash (alert + restart step) happened. */
  crashAt: number;
  lastTs: number;
}

/** Writes `minutes` of the synthetic session into `dir` (the decode crash comes at 58 % of it). */
export async function writeSession(
  dir: string,
  minutes: number,
  opts: { close?: boolean; seed?: number; format?: '1.1' } = {},
): Promise<WrittenSession> {
  await mkdir(dir, { recursive: true });
  const store = new SessionStore(dir);
  const sim = new SyntheticPdSession(START, opts.seed ?? 3, minutes * 60_000);
  const clock = manualClock(START);
  const host = { id: 'demo', label: 'gpu-host-01', kind: 'demo' as const };
  const named = opts.format === '1.1' ? null : fleetOfOne({ host, deployment: DEPLOYMENT });
  const source = (role: string): string => named?.source(role) ?? role;
  const { id, path, writer } = await store.start(
    {
      startedAt: START,
      host,
      deployment: named?.deployment ?? DEPLOYMENT,
      appVersion: '0.1.0-test',
      ...(named ? { fleet: named.fleet } : {}),
    },
    // The overview the recording service writes; a 1.1 file has none.
    { clock, overview: opts.format === '1.1' ? false : REVIEW_OVERVIEW },
  );
  let crashAt = NaN;
  for (let i = 0; i < minutes * 60; i++) {
    const tick = sim.step();
    clock.set(sim.now);
    for (const s of tick.scrapes) writer.appendScrape(s.ts, source(s.target), s.exp);
    for (const u of tick.unitStates) writer.appendUnitState(u.ts, source(u.role), u.state);
    for (const h of tick.health) writer.appendHealth(h.ts, source(h.role), h.health);
    for (const e of tick.events) {
      if (e.kind === 'alert' && Number.isNaN(crashAt)) crashAt = e.ts;
      writer.appendEvent(e);
    }
    for (const j of tick.journal) writer.appendJournal({ ...j, role: source(j.role) });
  }
  const lastTs = writer.stats.lastTs ?? START;
  if (opts.close === false) await writer.flush();
  else await writer.close();
  if (opts.format === '1.1') await asOlderMinor(path, 1);
  return { id, path, crashAt, lastTs };
}
