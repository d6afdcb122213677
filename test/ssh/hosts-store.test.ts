// The app's hosts file: add/edit/remove, validated on every load; a broken file is reported with path and
// line:column and never overwritten; writes are atomic and keep keys this version does not know.
import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { HostStore, HostStoreError } from '../../src/main/core/config/hosts-store';
import { findSyntaxError, locatePath, positionAt } from '../../src/main/core/config/json-location';

let dir: string;
let n = 0;
const fresh = (): string => path.join(dir, `cfg-${++n}`, 'hosts.json');

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pd-hosts-'));
});
afterAll(() => fs.rm(dir, { recursive: true, force: true }));

async function errorOf(p: Promise<unknown>): Promise<HostStoreError> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(HostStoreError);
  return e as HostStoreError;
}

describe('HostStore', () => {
  it('adds, lists, updates and removes hosts, persisting each change', async () => {
    const file = fresh();
    const store = new HostStore(file);
    expect(await store.list()).toEqual([]);

    const a = await store.add({ label: 'GPU node 1', kind: 'ssh', alias: 'gpu1' });
    const b = await store.add({
      label: 'GPU node 1',
      kind: 'ssh',
      hostname: '10.0.0.2',
      port: 2222,
      user: 'ops',
      identityFile: '~/.ssh/id_gpu',
    });
    expect(a.id).toBe('gpu-node-1');
    expect(b.id).toBe('gpu-node-1-2');
    expect(await new HostStore(file).list()).toEqual([a, b]);

    const edited = await store.update(b.id, { alias: 'gpu2', hostname: undefined, port: undefined });
    expect(edited).toEqual({
      id: b.id,
      label: 'GPU node 1',
      kind: 'ssh',
      alias: 'gpu2',
      user: 'ops',
      identityFile: '~/.ssh/id_gpu',
    });
    await store.remove(a.id);
    expect(await new HostStore(file).list()).toEqual([edited]);

    expect((await errorOf(store.remove('nope'))).code).toBe('not-found');
    expect((await errorOf(store.update('nope', { label: 'x' }))).code).toBe('not-found');
    expect((await errorOf(store.add({ id: b.id, label: 'dup', kind: 'ssh', alias: 'x' }))).code).toBe(
      'conflict',
    );
  });

  it('validates hosts: alias or hostname required, sane ports and names, nothing unknown', async () => {
    const store = new HostStore(fresh());
    const bad: Array<[Record<string, unknown>, RegExp]> = [
      [{ label: 'x', kind: 'ssh' }, /needs an alias or a hostname/],
      [{ label: 'x', kind: 'ssh', hostname: 'h', port: 70000 }, /port/],
      [{ label: 'x', kind: 'ssh', alias: '-oProxyCommand=evil' }, /alias/],
      [{ label: 'x', kind: 'ssh', hostname: 'two words' }, /hostname/],
      [{ label: 'x', kind: 'ssh', hostname: 'h', user: 'a@b' }, /user/],
      [{ label: '  ', kind: 'ssh', hostname: 'h' }, /label/],
      // Printed on one line wherever it is shown: a line break or a terminal escape would forge output.
      [
        { label: 'gpu\nstatus: all healthy', kind: 'ssh', hostname: 'h' },
        /label must be one line of plain text/,
      ],
      [{ label: 'gpu\x1b]0;pwned\x07', kind: 'ssh', hostname: 'h' }, /label must be one line of plain text/],
      [{ label: 'x', kind: 'ssh', hostname: 'h', password: 'secret' }, /password|Unrecognized/i],
    ];
    for (const [input, re] of bad) {
      const e = await errorOf(store.add(input as never));
      expect(e.code, JSON.stringify(input)).toBe('invalid-argument');
      expect(e.message, JSON.stringify(input)).toMatch(re);
    }
    expect(await store.list()).toEqual([]);
  });

  it('reports a file that is not JSON with path and line:column, and never overwrites it', async () => {
    const file = fresh();
    await fs.mkdir(path.dirname(file), { recursive: true });
    const broken =
      '{\n  "version": 1,\n  "hosts": [\n    { "id": "a", "label": "A", "kind": "ssh", "alias": "a" },\n  ]\n}\n';
    await fs.writeFile(file, broken);
    const store = new HostStore(file);
    const e = await errorOf(store.list());
    expect(e.code).toBe('config');
    expect(e).toMatchObject({ file, line: 5, column: 3 });
    expect(e.message).toMatch(
      new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:5:3: not valid JSON`),
    );
    await errorOf(store.add({ label: 'B', kind: 'ssh', alias: 'b' }));
    expect(await fs.readFile(file, 'utf8')).toBe(broken);
  });

  it('refuses a hosts.json that is a FIFO or over 4 MiB before reading it', async () => {
    const file = fresh();
    await fs.mkdir(path.dirname(file), { recursive: true });
    execFileSync('mkfifo', [file]);
    try {
      // Reading a FIFO nobody writes to waited for ever.
      const e = await errorOf(new HostStore(file).list());
      expect(e.message).toBe(
        `${file} is a named pipe (FIFO); a hosts file is a regular file of at most 4194304 bytes, so it is refused`,
      );
    } finally {
      try {
        closeSync(openSync(file, constants.O_WRONLY | constants.O_NONBLOCK));
      } catch {
        // ENXIO: nobody is waiting on it.
      }
    }
    const big = fresh();
    await fs.mkdir(path.dirname(big), { recursive: true });
    await fs.writeFile(big, '{"version":1,"hosts":[]}');
    await fs.truncate(big, 5 * 1024 * 1024);
    expect((await errorOf(new HostStore(big).list())).message).toBe(
      `${big} is ${5 * 1024 * 1024} bytes; a hosts file is a regular file of at most 4194304 bytes, so it is refused`,
    );
  });

  it('points at the offending value when the JSON is valid but a host is not', async () => {
    const file = fresh();
    await fs.mkdir(path.dirname(file), { recursive: true });
    const text = [
      '{',
      '  "version": 1,',
      '  "hosts": [',
      '    { "id": "a", "label": "A", "kind": "ssh", "alias": "a" },',
      '    { "id": "b", "label": "B", "kind": "ssh", "hostname": "b",',
      '      "port": 99999 }',
      '  ]',
      '}',
    ].join('\n');
    await fs.writeFile(file, text);
    const e = await errorOf(new HostStore(file).list());
    expect(e).toMatchObject({ line: 6, column: 15 });
    expect(e.message).toContain(`${file}:6:15: hosts[1].port:`);

    await fs.writeFile(file, text.replace('"id": "b"', '"id": "a"').replace('99999', '22'));
    const dup = await errorOf(new HostStore(file).list());
    expect(dup.message).toContain(':5:13: hosts[1].id "a" is used by an earlier host too');

    await fs.writeFile(file, text.replace('"label": "B"', '"label": "B\\u001b[2J"').replace('99999', '22'));
    expect((await errorOf(new HostStore(file).list())).message).toContain(
      `${file}:5:27: hosts[1].label: label must be one line of plain text`,
    );

    await fs.writeFile(file, '{ "version": 7, "hosts": [] }');
    expect((await errorOf(new HostStore(file).list())).message).toContain('written by a newer PD Console');
  });

  it('writes atomically (no temp files left, mode 0600) and keeps unknown top-level keys', async () => {
    const file = fresh();
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(file, JSON.stringify({ version: 1, hosts: [], deployments: [{ id: 'd1' }] }));
    const store = new HostStore(file);
    await store.add({ label: 'A', kind: 'ssh', alias: 'a' });
    const saved = JSON.parse(await fs.readFile(file, 'utf8')) as Record<string, unknown>;
    expect(saved.deployments).toEqual([{ id: 'd1' }]);
    expect(await fs.readdir(path.dirname(file))).toEqual(['hosts.json']);
    if (process.platform !== 'win32') expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
  });

  it('serializes concurrent changes so none is lost', async () => {
    const store = new HostStore(fresh());
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => store.add({ label: `node ${i}`, kind: 'ssh', alias: `n${i}` })),
    );
    const hosts = await store.list();
    expect(hosts).toHaveLength(20);
    expect(new Set(hosts.map((h) => h.id)).size).toBe(20);
  });
});

describe('JSON positions', () => {
  it('finds the syntax error JSON.parse rejects, wherever Node puts (or omits) the position', () => {
    const cases: Array<[string, number, RegExp]> = [
      ['{"a": 1,}', 8, /property name/],
      ['[1, 2', 5, /end of file/],
      ['{"a" 1}', 5, /":"/],
      ['{"a": tru}', 6, /unexpected/],
      ['{"a": "x\ny"}', 8, /control character/],
      ['{} {}', 3, /after the end/],
    ];
    for (const [text, offset, re] of cases) {
      expect(() => JSON.parse(text)).toThrow();
      const found = findSyntaxError(text);
      expect(found, text).toMatchObject({ offset });
      expect(found!.message, text).toMatch(re);
    }
  });

  it('property: agrees with JSON.parse on validity, and locates every path of valid JSON', () => {
    fc.assert(
      fc.property(fc.oneof(fc.json(), fc.string({ maxLength: 40 })), (text) => {
        let valid = true;
        try {
          JSON.parse(text);
        } catch {
          valid = false;
        }
        expect(findSyntaxError(text) === null).toBe(valid);
      }),
      { numRuns: 1000 },
    );
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify({ root: value }, null, 2);
        const pos = locatePath(text, ['root']);
        const offset =
          text
            .split('\n')
            .slice(0, pos.line - 1)
            .join('\n').length +
          (pos.line > 1 ? 1 : 0) +
          pos.column -
          1;
        expect(JSON.parse(text.slice(offset).replace(/,?\s*}\s*$/, ''))).toEqual(
          JSON.parse(JSON.stringify(value)),
        );
        expect(positionAt(text, offset)).toEqual(pos);
      }),
      { numRuns: 300 },
    );
  });
});
