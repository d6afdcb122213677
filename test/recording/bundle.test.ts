// Incident bundles leave the operator's machine, so no secret may survive in any file of the archive: planted
// API keys, tokens, passwords, Authorization headers and private keys in unit files, the journal, metrics
// snapshots and the recording itself.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REVIEW_OVERVIEW } from '../../src/main/core/review/overview-table';
import { scanMarked } from '../../src/main/core/recording/members';
import { FORMAT_MINOR_VERSION } from '../../src/main/core/recording/format';
import { mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { extract } from 'tar';
import {
  RecordingWriter,
  readRecording,
  redactSecrets,
  redactSecretsCounted,
  writeIncidentBundle,
  type JournalLine,
} from '../../src/main/core/recording';
import { exposition, header, manualClock, tempDir } from './helpers';
import { SERVER_ARGS_HARMLESS, SERVER_ARGS_SECRETS, serverArgsLineWithSecrets } from './server-args-line';

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterAll(async () => {
  await cleanup();
});

const SECRETS = {
  apiKey: 'sk-live-PLANTED0123456789abcdefXYZ',
  hfToken: 'hf_PLANTEDabcdefghijklmnopqrstuv',
  password: 'Pl4nted-Passw0rd!',
  dbPassword: 'PlantedDbPw42',
  bearer: 'PLANTEDbearer.token-value_123456',
  urlPassword: 'PlantedUrlSecret',
  keyBody1: 'MIIEpAIBAAKCAQEAplantedKEYbodyLINEone0123456789abcdefABCDEF',
  keyBody2: 'plantedKEYbodyLINEtwoZZZZ0123456789abcdefghijklmnopqrstuv==',
  snapshotKey: 'sk-PLANTEDsnapshotKEY0123456789',
  githubToken: 'ghp_PLANTED0123456789abcdefghijklmnopqrstu',
  noteWhileRecording: 'PLANTEDnoteSecret-4f2a9c',
  ...SERVER_ARGS_SECRETS,
};

const PEM = `-----BEGIN RSA PRIVATE KEY-----\n${SECRETS.keyBody1}\n${SECRETS.keyBody2}\n-----END RSA PRIVATE KEY-----`;

const UNIT = `# /etc/systemd/system/sglang-decode.service
[Service]
Environment="HF_TOKEN=${SECRETS.hfToken}" "TOKENIZERS_PARALLELISM=false"
Environment=DB_PASSWORD=${SECRETS.dbPassword}
ExecStart=/opt/sglang/venv/bin/python -m sglang.launch_server --model-path /models/Qwen3-32B --tokenizer-path /models/tok --api-key ${SECRETS.apiKey} --port 30200 --max-total-tokens 447416
Restart=on-failure
`;

async function allText(root: string): Promise<string> {
  let out = '';
  for (const e of await readdir(root, { withFileTypes: true })) {
    const p = join(root, e.name);
    if (e.isDirectory()) out += await allText(p);
    else {
      const b = await readFile(p);
      out += (b[0] === 0x1f && b[1] === 0x8b ? gunzipSync(b, { finishFlush: 2 }) : b).toString('utf8') + '\n';
    }
  }
  return out;
}

describe('redactSecrets', () => {
  it('removes planted secrets and keeps look-alikes that are not secrets', () => {
    const text = [
      UNIT,
      `login failed for admin password=${SECRETS.password}`,
      `GET /v1/models Authorization: Bearer ${SECRETS.bearer}`,
      `connecting to postgres://app:${SECRETS.urlPassword}@db:5432/x`,
      PEM,
      `token ${SECRETS.githubToken} leaked`,
      '[TP0] Decode batch. #running-req: 57, #token: 236544, token usage: 0.53, gen throughput (token/s): 2311.70',
    ].join('\n');
    const red = redactSecrets(text);
    for (const [what, secret] of Object.entries(SECRETS))
      if (what !== 'snapshotKey') expect(red, what).not.toContain(secret);
    for (const kept of [
      '--tokenizer-path /models/tok',
      '--max-total-tokens 447416',
      'TOKENIZERS_PARALLELISM=false',
      '#token: 236544',
      'token usage: 0.53',
      '--port 30200',
    ])
      expect(red).toContain(kept);
    expect(red).toContain('--api-key [REDACTED]');
    expect(red).toContain('HF_TOKEN=[REDACTED]"');
    expect(red).toContain('Authorization: Bearer [REDACTED]');
    expect(red).toContain('-----BEGIN RSA PRIVATE KEY-----\n[REDACTED]\n-----END RSA PRIVATE KEY-----');
  });
});

describe("redactSecrets on SGLang's ServerArgs line (Python repr, quoted, dict and JSON-in-string forms)", () => {
  it('removes every secret-bearing field and leaves the token-ish numbers and paths alone', () => {
    const r = redactSecretsCounted(serverArgsLineWithSecrets());
    for (const [what, secret] of Object.entries(SERVER_ARGS_SECRETS))
      expect(r.text, what).not.toContain(secret);
    for (const h of SERVER_ARGS_HARMLESS) expect(r.text, h).toContain(h);
    expect(r.count).toBe(Object.keys(SERVER_ARGS_SECRETS).length);
    for (const [text, want] of [
      ["api_key='sk-x1', admin_api_key=None", "api_key='[REDACTED]', admin_api_key=None"],
      [`{'api_key': 'abc def', "password": "p w"}`, `{'api_key': '[REDACTED]', "password": "[REDACTED]"}`],
      // Python's repr of a string holding a single quote uses double quotes.
      [`ssl_keyfile_password="it's mine"`, 'ssl_keyfile_password="[REDACTED]"'],
      ['redis://:hunter2@cache:6379/0', 'redis://:[REDACTED]@cache:6379/0'],
      [
        'bucket_time_to_first_token=[0.1, 0.2], max_total_tokens=20480',
        'bucket_time_to_first_token=[0.1, 0.2], max_total_tokens=20480',
      ],
    ])
      expect(redactSecrets(text)).toBe(want);
  });
});

describe('incident bundle', () => {
  it('contains the recording, unit files, journal window and snapshots with no secret left', async () => {
    const t0 = Date.UTC(2026, 0, 5, 12);
    const recPath = join(dir, 's.pdrec.jsonl.gz');
    const w = await RecordingWriter.open(
      recPath,
      header({
        startedAt: t0,
        deployment: {
          id: 'd',
          name: 'PD',
          services: [
            {
              role: 'decode',
              hostId: 'h',
              unit: 'sglang-decode.service',
              apiUrl: `http://ops:${SECRETS.urlPassword}@127.0.0.1:30200`,
            },
          ],
        },
      }),
      // With the overview the app writes, which the copy leaves out.
      { clock: manualClock(t0), overview: REVIEW_OVERVIEW },
    );
    const journal: JournalLine[] = [];
    const jl = (ts: number, message: string): JournalLine => ({
      ts,
      role: 'decode',
      unit: 'sglang-decode.service',
      priority: 6,
      message,
    });
    const pemLines = PEM.split('\n');
    for (let i = 0; i < 60; i++) {
      const ts = t0 + i * 1000;
      w.appendScrape(
        ts,
        'decode',
        exposition([
          { name: 'sglang:num_running_reqs', type: 'gauge', samples: [['sglang:num_running_reqs', {}, i]] },
        ]),
      );
      const lines = [jl(ts + 1, `Decode batch. #running-req: ${i}, #token: ${1000 * i}`)];
      if (i === 10)
        lines.push(
          jl(ts + 2, `auth with password=${SECRETS.password}`),
          jl(ts + 3, `upstream said Authorization: Bearer ${SECRETS.bearer}`),
        );
      if (i === 20) pemLines.forEach((m, k) => lines.push(jl(ts + 10 + k, m)));
      if (i === 12) lines.push(jl(ts + 4, serverArgsLineWithSecrets()));
      for (const l of lines) {
        w.appendJournal(l);
        journal.push(l);
      }
    }
    w.appendUnitState(t0 + 5, 'decode', {
      unit: 'sglang-decode.service',
      loadState: 'loaded',
      activeState: 'active',
      subState: 'running',
      mainPid: 1,
      nRestarts: 0,
      activeEnterTimestamp: t0,
      result: 'success',
      execStart: `/opt/sglang/venv/bin/python -m sglang.launch_server --api-key ${SECRETS.apiKey} --port 30200`,
    });
    w.appendEvent({
      id: 'a1',
      ts: t0 + 7,
      kind: 'action',
      severity: 'info',
      title: 'restart decode',
      detail: `curl -H "Authorization: Bearer ${SECRETS.bearer}" ${SECRETS.githubToken}`,
    });
    // A note typed while recording, with a pasted secret, goes into the file through the writer.
    w.appendEvent({
      id: 'note-1',
      ts: t0 + 9,
      kind: 'annotation',
      severity: 'info',
      title: `tried --admin-api-key ${SECRETS.noteWhileRecording} here`,
    });
    await w.close();
    // The recording itself holds no secret either: the writer redacts what it is given.
    const own = gunzipSync(await readFile(recPath)).toString('utf8');
    expect(own).toContain('server_args=ServerArgs(');
    for (const [what, secret] of Object.entries(SECRETS))
      if (what !== 'snapshotKey') expect(own, `${what} in the recording`).not.toContain(secret);
    for (const h of SERVER_ARGS_HARMLESS) expect(own, h).toContain(h);

    const out = join(dir, 'incident.tar.gz');
    const res = await writeIncidentBundle(
      {
        recordingPath: recPath,
        session: {
          id: 's',
          name: 'decode OOM',
          annotations: [{ ts: t0 + 20_000, text: `pasted key ${SECRETS.apiKey} by mistake` }],
        },
        unitFiles: [{ unit: 'sglang-decode.service', text: UNIT }],
        journal,
        snapshots: [
          {
            name: 'decode /metrics',
            takenAt: t0 + 30_000,
            text: `# HELP x y\nx{api_key="${SECRETS.snapshotKey}"} 1\nsglang:num_running_reqs 3\n`,
          },
        ],
        window: { fromMs: t0 + 5_000, toMs: t0 + 40_000 },
        note: `operator note: used ${SECRETS.hfToken}`,
      },
      out,
    );
    expect(res.redactions).toBeGreaterThanOrEqual(10);
    expect((await stat(out)).size).toBeGreaterThan(0);

    const x = join(dir, 'x');
    await mkdir(x);
    await extract({ file: out, cwd: x });
    const [top] = await readdir(x);
    const files = (await readdir(join(x, top), { recursive: true })).map(String).sort();
    expect(files).toEqual(
      expect.arrayContaining([
        'manifest.json',
        'recording.pdrec.jsonl.gz',
        'journal.log',
        'units/sglang-decode.service',
        'snapshots/01-decode__metrics.prom',
      ]),
    );
    const everything = await allText(join(x, top));
    for (const [what, secret] of Object.entries(SECRETS))
      expect(everything, `${what} survived`).not.toContain(secret);
    expect(everything).toContain('[REDACTED]');
    expect(everything).toContain("api_key='[REDACTED]', admin_api_key='[REDACTED]'");
    for (const h of SERVER_ARGS_HARMLESS) expect(everything, h).toContain(h);
    expect((await stat(out)).mode & 0o777).toBe(0o600);

    // Still useful: the non-secret parts are there, and the recording inside opens.
    const journalLog = await readFile(join(x, top, 'journal.log'), 'utf8');
    expect(journalLog).toContain('Decode batch. #running-req: 5, #token: 5000');
    expect(journalLog).not.toContain('#running-req: 4,');
    expect(journalLog).toContain('-----BEGIN RSA PRIVATE KEY-----');
    const inner = await readRecording(join(x, top, 'recording.pdrec.jsonl.gz'));
    expect(inner.closedCleanly).toBe(true);
    expect(inner.warnings).toEqual([]);
    // One gzip member: the source's overview members and index are not copied, and its header says so.
    expect(scanMarked(await readFile(recPath)).map((m) => m.kind)).toContain('index');
    expect(inner.header.minorVersion).toBe(FORMAT_MINOR_VERSION);
    expect(inner.header.overview).toBeUndefined();
    expect(gunzipSync(await readFile(join(x, top, 'recording.pdrec.jsonl.gz'))).toString()).not.toMatch(
      /"k":"(o\.|index)/,
    );
    expect(inner.series[0].v.length).toBe(60);
    expect(inner.unitStates[0].state.execStart).toContain('--api-key [REDACTED]');
    expect(inner.journal.filter((j) => j.message === '[REDACTED]').length).toBeGreaterThanOrEqual(2);
    const manifest = JSON.parse(await readFile(join(x, top, 'manifest.json'), 'utf8'));
    expect(manifest).toMatchObject({
      format: 'pd-console-incident-bundle',
      version: 1,
      redactions: res.redactions,
    });
    expect(manifest.files.map((f: { path: string }) => f.path)).toContain('recording.pdrec.jsonl.gz');
    await expect(
      writeIncidentBundle({ recordingPath: recPath, unitFiles: [], journal: [], snapshots: [] }, out),
    ).rejects.toThrow(/already exists/);
  });

  it('journal.log has one line per entry, with what the host wrote shown rather than acting', async () => {
    const t0 = Date.UTC(2026, 0, 5, 13);
    const recPath = join(dir, 'escapes.pdrec.jsonl.gz');
    const w = await RecordingWriter.open(recPath, header({ startedAt: t0 }), { clock: manualClock(t0) });
    await w.close();
    const jl = (ts: number, message: string): JournalLine => ({
      ts,
      role: 'decode',
      unit: 'sglang-decode.service',
      priority: 6,
      message,
    });
    const out = join(dir, 'escapes.tar.gz');
    await writeIncidentBundle(
      {
        recordingPath: recPath,
        unitFiles: [],
        journal: [
          jl(t0 + 1, 'ready'),
          // Sets the terminal's title and clears it, then forges an entry of another unit on a line of its own.
          jl(
            t0 + 2,
            'x\x1b]0;pwned\x07\x1b[2J\u009b31m\u202e\r\n2026-01-05T13:00:00.003Z sglang-router.service[3] forged',
          ),
          jl(t0 + 3, 'Decode batch. #running-req: 5'),
        ],
        snapshots: [],
      },
      out,
    );
    const x = join(dir, 'escapes');
    await mkdir(x);
    await extract({ file: out, cwd: x });
    const [top] = await readdir(x);
    const log = await readFile(join(x, top, 'journal.log'), 'utf8');
    expect(log.split('\n')).toEqual([
      '2026-01-05T13:00:00.001Z sglang-decode.service[6] ready',
      '2026-01-05T13:00:00.002Z sglang-decode.service[6] x\\u001b]0;pwned\\u0007\\u001b[2J\\u009b31m\\u202e\\r\\n2026-01-05T13:00:00.003Z sglang-router.service[3] forged',
      '2026-01-05T13:00:00.003Z sglang-decode.service[6] Decode batch. #running-req: 5',
      '',
    ]);
  });
});
