// The restart's building blocks on real formats: the exact commands, the sudoers line, what sudo/systemctl
// print when they refuse (taken from the demo host's emulation of them), journalctl's JSON, SGLang's startup
// log lines, the stack order, and the smg worker API used to drain.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  classifyCommandError,
  isNewInvocation,
  parseIdentity,
  parseUnitSnapshot,
  restartCommand,
  sudoersLine,
  followShowCommand,
  IDENTITY_COMMAND,
} from '../../src/main/core/actions/unit-commands';
import { restartJournalLines } from '../../src/main/core/actions/journal-follow';
import { journalAfterCursorCommand } from '../../src/main/core/journal/commands';
import { parseJournalJson } from '../../src/main/core/journal/journal-json';
import { advanceProgress, progressFromLine } from '../../src/main/core/actions/load-progress';
import { applyPatch, defaultSettings, stagesFor } from '../../src/main/core/actions/restart-settings';
import {
  addToRouter,
  drainReading,
  probeDrain,
  removeFromRouter,
  routerDrain,
} from '../../src/main/core/actions/drain';
import { parseExposition } from '../../src/main/core/probes/exposition/parser';
import type { ScrapeReading } from '../../src/main/core/monitor/scrape-feed';
import { acceleratedClock } from '../../src/main/core/clock';
import { emulateCommand, startDemoHost, type DemoHost } from '../../src/main/demo';
import { shardProgress } from '../../src/main/demo/log-lines';
import type { ServiceConfig } from '../../src/shared/domain';

let demo: DemoHost | undefined;
afterEach(async () => {
  await demo?.stop();
  demo = undefined;
});

async function host(): Promise<DemoHost> {
  demo = await startDemoHost({ clock: acceleratedClock(20), seed: 3 });
  return demo;
}

describe('commands', () => {
  it('restarts with --no-block, through sudo -n unless root or polkit, quoting nothing it does not need to', () => {
    expect(restartCommand('sglang-decode.service', 'sudo')).toBe(
      'sudo -n systemctl --no-block restart sglang-decode.service',
    );
    expect(restartCommand('sglang-decode.service', 'root')).toBe(
      'systemctl --no-block restart sglang-decode.service',
    );
    expect(restartCommand('dsv4-decode@1.service', 'polkit')).toBe(
      'systemctl --no-block restart dsv4-decode@1.service',
    );
  });

  it('refuses unit names that could smuggle shell syntax, before any command exists', () => {
    for (const bad of ['x.service; reboot', '$(id).service', '-H evil', 'a b.service', 'x`y`.service'])
      expect(() => restartCommand(bad, 'sudo')).toThrow(/refusing to send unit name/);
  });

  it('writes a sudoers line that allows exactly these restarts, with the full systemctl path', () => {
    expect(
      sudoersLine('operator', ['sglang-prefill.service', 'sglang-decode.service'], '/bin/systemctl'),
    ).toBe(
      'operator ALL=(root) NOPASSWD: /bin/systemctl --no-block restart sglang-prefill.service, /bin/systemctl --no-block restart sglang-decode.service',
    );
  });

  it('reads who it is on the host and where systemctl lives, as the demo host answers', async () => {
    const d = await host();
    const asOperator = parseIdentity((await emulateCommand(d.sim, IDENTITY_COMMAND, 'operator')).stdout);
    expect(asOperator).toEqual({ uid: 1000, user: 'operator', systemctlPath: '/usr/bin/systemctl' });
    const asRoot = parseIdentity((await emulateCommand(d.sim, IDENTITY_COMMAND, 'root')).stdout);
    expect(asRoot?.uid).toBe(0);
    expect(parseIdentity('uid=1000(x) gid=1000(x)\n')).toBeNull();
  });
});

describe('what sudo and systemctl say when they refuse', () => {
  it('recognises sudo asking for a password, and a unit systemd does not know', async () => {
    const d = await host();
    d.sim.setFault('sudo-password', true);
    const sudo = await emulateCommand(d.sim, restartCommand('sglang-decode.service', 'sudo'), 'operator');
    expect(sudo.exitCode).not.toBe(0);
    expect(classifyCommandError(sudo.stderr, sudo.exitCode)).toBe('sudo-password');
    d.sim.setFault('sudo-password', false);
    const missing = await emulateCommand(d.sim, restartCommand('sglang-decoder.service', 'root'), 'root');
    expect(missing.exitCode).not.toBe(0);
    expect(classifyCommandError(missing.stderr, missing.exitCode)).toBe('unit-not-found');
    expect(classifyCommandError('sudo: operator is not in the sudoers file.', 1)).toBe('sudo-denied');
    expect(classifyCommandError('Failed to restart x.service: Interactive authentication required.', 1)).toBe(
      'access-denied',
    );
  });

  it('tells a new invocation from the old one by systemd’s own ids, and a missing unit by LoadState', async () => {
    const d = await host();
    const show = async (unit: string) =>
      parseUnitSnapshot((await emulateCommand(d.sim, followShowCommand(unit), 'operator')).stdout, unit);
    const before = await show('sglang-router.service');
    expect(before.activeState).toBe('active');
    expect(before.invocationId).toMatch(/^[0-9a-f]{32}$/);
    expect(isNewInvocation(before, await show('sglang-router.service'))).toBe(false);
    await emulateCommand(d.sim, restartCommand('sglang-router.service', 'root'), 'root');
    // The simulated unit stops and starts on its clock: wait for the new invocation, not for a guessed time.
    await vi.waitFor(
      async () => expect(isNewInvocation(before, await show('sglang-router.service'))).toBe(true),
      { timeout: 5_000, interval: 20 },
    );
    expect((await show('nope.service')).loadState).toBe('not-found');
  });
});

describe('journal and load progress', () => {
  it('parses journalctl -o json: cursor, time, multi-line and byte-array messages, stray lines', () => {
    const out = [
      '{"__CURSOR":"s=1;i=5","__REALTIME_TIMESTAMP":"1795972445451000","PRIORITY":"6","MESSAGE":"Load weight begin."}',
      '-- No entries --',
      '{"__CURSOR":"s=1;i=6","__REALTIME_TIMESTAMP":"1795972446000000","PRIORITY":"3","MESSAGE":"Traceback:\\n  File x\\nRuntimeError: boom"}',
      `{"__CURSOR":"s=1;i=7","__REALTIME_TIMESTAMP":"1795972447000000","MESSAGE":${JSON.stringify([...Buffer.from('bytes ok')])}}`,
      '{"__CURSOR":"s=1;i=8","__REALTIME_TIMESTAMP":"1795972448000000","MESSAGE":null}',
    ].join('\n');
    const p = parseJournalJson(out);
    expect(p.lines.at(-1)?.cursor).toBe('s=1;i=8');
    expect(p.rejected).toEqual(['-- No entries --']);
    const lines = restartJournalLines(p.lines);
    expect(lines.map((l) => l.text)).toEqual([
      'Load weight begin.',
      'Traceback:',
      '  File x',
      'RuntimeError: boom',
      'bytes ok',
      '[message larger than 4096 bytes; journalctl --all shows it]',
    ]);
    expect(lines[0]).toMatchObject({ ts: 1795972445451, priority: 6 });
    expect(lines[1]).toMatchObject({ ts: 1795972446000, priority: 3 });
    expect(journalAfterCursorCommand('sglang-decode.service', 's=1;i=8', 5000)).toBe(
      "journalctl --no-pager -o json --all -u sglang-decode.service --after-cursor 's=1;i=8' -n 5000",
    );
  });

  it('reads weight shards, CUDA graph capture and readiness from SGLang’s log, never going backwards', () => {
    expect(progressFromLine(`[2026-11-29 17:17:29 TP0] ${shardProgress(4, 41)}`)).toMatchObject({
      phase: 'weights',
      done: 4,
      total: 17,
    });
    expect(
      progressFromLine(
        'Capturing batches (bs=256 avail_mem=7.90 GB):  45%|████▌     | 23/52 [00:10<00:12,  2.1it/s]',
      ),
    ).toMatchObject({ phase: 'cuda-graph', done: 23, total: 52 });
    const lines = [
      shardProgress(3, 30),
      shardProgress(9, 90),
      // Another tensor-parallel rank lagging behind must not move the bar back.
      shardProgress(5, 50),
      'Capture cuda graph begin. This can take up to several minutes.',
    ];
    const p = advanceProgress(undefined, lines);
    expect(p?.phase).toBe('cuda-graph');
    const q = advanceProgress(advanceProgress(undefined, lines.slice(0, 3)), []);
    expect(q).toMatchObject({ phase: 'weights', done: 9 });
    expect(advanceProgress(p, ['The server is fired up and ready to roll!'])?.phase).toBe('ready');
  });

  it('reads SGLang’s progress bars as journald gives them: each shard redraw a "\\r"-led line, the CUDA-graph bar one line', () => {
    // journalctl prints both as byte arrays (a carriage return is not printable); the load progress and the
    // restart's journal read their last redraw, as a terminal would show it.
    const json = (message: string, i: number): string =>
      JSON.stringify({
        __CURSOR: `s=1;i=${i}`,
        __REALTIME_TIMESTAMP: String(1_795_972_445_000_000 + i),
        PRIORITY: '6',
        MESSAGE: [...Buffer.from(message)],
      });
    const capture = [
      '\r  0%|          | 0/20 [00:00<?, ?it/s]',
      '\rCapturing batches (bs=256 avail_mem=7.90 GB):   0%|          | 0/20 [00:00<?, ?it/s]',
      '\rCapturing batches (bs=1 avail_mem=6.47 GB): 100%|██████████| 20/20 [00:20<00:00,  1.00s/it]',
    ].join('');
    const shard = '  \rLoading safetensors checkpoint shards:  53% Completed | 9/17 [00:19<00:17,  2.15s/it]';
    const p = parseJournalJson([json(shard, 1), json(capture, 2)].join('\n'));
    const lines = restartJournalLines(p.lines).map((l) => l.text);
    expect(lines).toEqual([
      'Loading safetensors checkpoint shards:  53% Completed | 9/17 [00:19<00:17,  2.15s/it]',
      'Capturing batches (bs=1 avail_mem=6.47 GB): 100%|██████████| 20/20 [00:20<00:00,  1.00s/it]',
    ]);
    expect(progressFromLine(lines[0])).toMatchObject({ phase: 'weights', done: 9, total: 17 });
    expect(progressFromLine(lines[1])).toMatchObject({
      phase: 'cuda-graph',
      done: 20,
      total: 20,
      fraction: 1,
    });
  });
});

describe('settings and stack order', () => {
  it('restarts prefill and decode together by default, the router last; sequences on request', () => {
    const s = defaultSettings();
    const all = ['prefill', 'decode', 'router'] as const;
    expect(stagesFor('stack', s, all)).toEqual([['prefill', 'decode'], ['router']]);
    expect(stagesFor('stack', applyPatch(s, { stackOrder: 'decode-first' }), all)).toEqual([
      ['decode'],
      ['prefill'],
      ['router'],
    ]);
    expect(stagesFor('stack', applyPatch(s, { stackIncludesRouter: false }), all)).toEqual([
      ['prefill', 'decode'],
    ]);
    expect(stagesFor('stack', s, ['decode', 'router'])).toEqual([['decode'], ['router']]);
    expect(stagesFor('decode', s, all)).toEqual([['decode']]);
  });

  it('merges timeout patches per role and keeps a locked read-only on', () => {
    const s = applyPatch(defaultSettings(), { timeouts: { server: { healthMs: 60_000 } } });
    expect(s.timeouts.server.healthMs).toBe(60_000);
    expect(s.timeouts.server.activeMs).toBe(35 * 60_000);
    expect(s.timeouts.router.healthMs).toBe(3 * 60_000);
    const locked = { ...s, readOnly: true, readOnlyLocked: true };
    expect(() => applyPatch(locked, { readOnly: false })).toThrow(/cannot be switched off/);
  });
});

/**
 * The part of smg's worker management API that drain uses, as smg's Admin API reference documents it
 * (GET /workers, GET/DELETE /workers/{id}, POST /workers answering 202). Only the behaviour drain relies on.
 */
function smgWorkerApi(): Promise<{
  url: string;
  calls: string[];
  workers: Map<string, Record<string, unknown>>;
  close(): Promise<void>;
}> {
  const workers = new Map<string, Record<string, unknown>>([
    [
      'w-pre',
      {
        id: 'w-pre',
        url: 'http://127.0.0.1:30100',
        worker_type: 'prefill',
        bootstrap_port: 8998,
        is_healthy: true,
      },
    ],
    ['w-dec', { id: 'w-dec', url: 'http://127.0.0.1:30200', worker_type: 'decode', is_healthy: true }],
  ]);
  const calls: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      calls.push(`${req.method} ${req.url}${body ? ` ${body}` : ''}`);
      const send = (status: number, json: unknown): void => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(json));
      };
      const m = /^\/workers\/([^/]+)$/.exec(req.url ?? '');
      if (req.url === '/workers' && req.method === 'GET')
        return send(200, { workers: [...workers.values()] });
      if (req.url === '/workers' && req.method === 'POST') {
        const spec = JSON.parse(body) as Record<string, unknown>;
        workers.set('w-new', { id: 'w-new', ...spec, is_healthy: false });
        return send(202, { status: 'accepted', worker_id: 'w-new' });
      }
      if (m && req.method === 'GET') return workers.has(m[1]) ? send(200, workers.get(m[1])) : send(404, {});
      if (m && req.method === 'DELETE') {
        workers.delete(m[1]);
        return send(202, { status: 'accepted', worker_id: m[1] });
      }
      send(404, { error: { message: 'not found' } });
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        calls,
        workers,
        close: () => new Promise((r) => server.close(() => r())),
      });
    }),
  );
}

describe('drain through the router’s worker API', () => {
  const prefill: ServiceConfig = {
    role: 'prefill',
    hostId: 'h',
    unit: 'sglang-prefill.service',
    apiUrl: 'http://127.0.0.1:30100',
  };

  it('removes the worker and registers it again with the same type and bootstrap port', async () => {
    const api = await smgWorkerApi();
    const agent = new http.Agent();
    try {
      const router: ServiceConfig = {
        role: 'router',
        hostId: 'h',
        unit: 'sglang-router.service',
        apiUrl: api.url,
      };
      const probe = await probeDrain(agent, router, prefill);
      expect(probe.supported).toBe(true);
      expect(probe.registration).toEqual({
        id: 'w-pre',
        url: 'http://127.0.0.1:30100',
        workerType: 'prefill',
        bootstrapPort: 8998,
      });
      await removeFromRouter(agent, router, probe.registration!);
      expect(api.workers.has('w-pre')).toBe(false);
      await addToRouter(agent, router, probe.registration!);
      expect(api.calls.at(-1)).toBe(
        'POST /workers {"url":"http://127.0.0.1:30100","worker_type":"prefill","bootstrap_port":8998}',
      );
    } finally {
      agent.destroy();
      await api.close();
    }
  });

  it('drains a worker as a restart and a roll do: out of the router, its running requests from the monitor’s scrapes, back in', async () => {
    const api = await smgWorkerApi();
    const agent = new http.Agent();
    const decode: ServiceConfig = {
      role: 'decode',
      hostId: 'h',
      unit: 'sglang-decode.service',
      apiUrl: 'http://127.0.0.1:30200',
      metricsUrl: 'http://127.0.0.1:30200/metrics',
    };
    const metrics = (running: number, transfer: number): ScrapeReading => ({
      ts: 0,
      exposition: parseExposition(
        [
          '# TYPE sglang:num_running_reqs gauge',
          `sglang:num_running_reqs{engine_type="unified",model_name="m",tp_rank="0"} ${running}`,
          '# TYPE sglang:num_decode_transfer_queue_reqs gauge',
          `sglang:num_decode_transfer_queue_reqs{engine_type="unified",model_name="m",tp_rank="0"} ${transfer}`,
          '',
        ].join('\n'),
        'prometheus',
      ),
    });
    // What the monitor scrapes next, per call: none yet, then 3 running + 1 waiting for its KV, then idle.
    const next: Array<ScrapeReading | undefined> = [undefined, metrics(3, 1), metrics(0, 0)];
    const asked: string[] = [];
    try {
      const router: ServiceConfig = { role: 'router', hostId: 'h', unit: 'r.service', apiUrl: api.url };
      const probe = await probeDrain(agent, router, decode);
      const d = routerDrain({
        agent: () => agent,
        router,
        worker: decode,
        registration: probe.registration!,
        scrapes: {
          latest: () => undefined,
          next: async (key) => {
            asked.push(key);
            return next.shift();
          },
        },
      });
      await d.remove();
      expect(api.workers.has('w-dec')).toBe(false);
      const readings = [await d.running(), await d.running(), await d.running()];
      expect(readings).toEqual(['no-scrape', 4, 0]);
      expect(readings.map((r) => drainReading(r))).toEqual([
        {
          done: false,
          detail: 'removed from the router; waiting for the monitor to scrape the worker again',
        },
        { done: false, detail: 'removed from the router; 4 requests still running' },
        { done: true, detail: 'removed from the router; no requests running' },
      ]);
      // The worker's own scrapes, by its service key: the drain never scrapes by itself.
      expect(asked).toEqual(['decode', 'decode', 'decode']);
      await d.add();
      expect(api.calls.at(-1)).toBe('POST /workers {"url":"http://127.0.0.1:30200","worker_type":"decode"}');
      expect(d.readdCommand).toBe(
        `curl -X POST ${api.url}/workers -H 'content-type: application/json' -d '{"url":"http://127.0.0.1:30200","worker_type":"decode"}'`,
      );
      // A worker without metrics does not say: the drain then goes ahead at once.
      const quiet = routerDrain({
        agent: () => agent,
        router,
        worker: { ...decode, metricsUrl: undefined },
        registration: probe.registration!,
        scrapes: { latest: () => undefined, next: async () => metrics(9, 9) },
      });
      expect(drainReading(await quiet.running())).toEqual({
        done: true,
        detail: 'removed from the router; the worker does not report running requests',
      });
    } finally {
      agent.destroy();
      await api.close();
    }
  });

  it('says the router cannot drain when it has no per-worker API, and does not touch it', async () => {
    // A router that lists workers but has no /workers/{id} (like the demo router, checked end to end elsewhere).
    const srv = http.createServer((req, res) => {
      res.writeHead(req.url === '/workers' ? 200 : 404, { 'content-type': 'application/json' });
      res.end(
        req.url === '/workers'
          ? JSON.stringify({ workers: [{ id: 'x', url: 'http://127.0.0.1:30100' }] })
          : '{}',
      );
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
    const agent = new http.Agent();
    try {
      const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
      const probe = await probeDrain(
        agent,
        { role: 'router', hostId: 'h', unit: 'r.service', apiUrl: url },
        prefill,
      );
      expect(probe).toMatchObject({ supported: false });
      expect(probe.detail).toMatch(
        /^drain not supported by this router version: GET \/workers\/\{id\} answered HTTP 404/,
      );
      expect((await probeDrain(agent, undefined, prefill)).supported).toBe(false);
    } finally {
      agent.destroy();
      await new Promise((r) => srv.close(r));
    }
  });
});

describe('load progress read against time', () => {
  it('says the log gives no shard figure and reads the time since start against the last load', async () => {
    const { describeProgress } = await import('../../src/main/core/actions/load-progress');
    const weights = { phase: 'weights' as const, fraction: 0, text: 'Load weight begin. avail mem=78.53 GB' };
    expect(describeProgress(weights, { elapsedMs: 125_000, lastLoadMs: 240_000 })).toBe(
      'loading weights (2 min of about 4 min, as the last load took)',
    );
    expect(describeProgress(weights, { elapsedMs: 45_000 })).toBe('loading weights (45 s since start)');
    // The log's own shard lines (a version that prints them one per line) are the better figure.
    const shard = { phase: 'weights' as const, done: 9, total: 17, fraction: 9 / 17, text: '' };
    expect(describeProgress(shard, { elapsedMs: 125_000, lastLoadMs: 240_000 })).toBe(
      'loading weights: shard 9/17 (53 %)',
    );
  });
});
