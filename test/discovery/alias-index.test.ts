// Which ssh alias reaches a worker's address: every concrete Host alias of the operator's config (Include
// followed, wildcards and negations skipped), resolved exactly as `ssh ALIAS` would — by the real `ssh -G` and by
// the built-in evaluator, which must agree — then matched against the address a router names.
import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAliasIndex } from '../../src/main/core/ssh/alias-addresses';
import { placeHost } from '../../src/main/core/discovery/fleet';
import { SSH } from '../fixtures/sshd';

let dir: string;
let config: string;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pd-alias-index-'));
  config = path.join(dir, 'config');
  await fs.writeFile(
    path.join(dir, 'gpus.conf'),
    ['Host gpu-c', '  HostName 10.1.0.14', '  User ops', '  Port 2222', ''].join('\n'),
  );
  await fs.writeFile(
    config,
    [
      `Include ${path.join(dir, 'gpus.conf')}`,
      'Host gpu-a gpu-a-mgmt',
      '  HostName 10.1.0.12',
      'Host gpu-b',
      '  HostName 10.1.0.13',
      '  ProxyJump bastion',
      'Host gpu-d',
      '  HostName gpu-d.cluster.example',
      'Host bastion',
      '  HostName 192.0.2.10',
      'Host *.internal !skip',
      '  User nobody',
      'Host *',
      '  ServerAliveInterval 15',
      '',
    ].join('\n'),
  );
});

afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

// The name gpu-d's HostName resolves to, as a site resolver would answer.
const lookupAll = async (name: string): Promise<string[]> =>
  name === 'gpu-d.cluster.example' ? ['10.1.0.15'] : [];

const sshGUsable = existsSync(SSH);

describe.each([['the built-in evaluator', null], ...(sshGUsable ? [['ssh -G', SSH] as const] : [])] as const)(
  'alias index via %s',
  (_name, sshBinary) => {
    it('lists each concrete alias once, in file order, Include first; wildcard and negated patterns are not aliases', async () => {
      const idx = createAliasIndex({ configFile: config, homeDir: dir, sshBinary, lookupAll });
      const all = await idx.all();
      expect(all.map((a) => [a.alias, a.hostname, a.port, a.addresses])).toEqual([
        ['gpu-c', '10.1.0.14', 2222, ['10.1.0.14']],
        ['gpu-a', '10.1.0.12', 22, ['10.1.0.12']],
        ['gpu-a-mgmt', '10.1.0.12', 22, ['10.1.0.12']],
        ['gpu-b', '10.1.0.13', 22, ['10.1.0.13']],
        ['gpu-d', 'gpu-d.cluster.example', 22, ['gpu-d.cluster.example', '10.1.0.15']],
        ['bastion', '192.0.2.10', 22, ['192.0.2.10']],
      ]);
      expect(all.find((a) => a.alias === 'gpu-c')?.user).toBe('ops');
    });

    it('places a worker address on the alias that reaches it: by HostName, behind ProxyJump, or by what a name resolves to', async () => {
      const all = await createAliasIndex({ configFile: config, homeDir: dir, sshBinary, lookupAll }).all();
      const origin = { host: 'gpu-a', addresses: ['10.1.0.12'] };
      const place = (h: string) => placeHost(h, origin, [], all, [], config);
      expect(place('10.1.0.13')).toEqual({ host: 'gpu-b' });
      expect(place('10.1.0.14')).toEqual({ host: 'gpu-c' });
      expect(place('10.1.0.15')).toEqual({ host: 'gpu-d' });
      expect(place('10.1.0.12')).toEqual({ host: 'gpu-a' });
      expect(place('10.1.0.99')).toEqual({
        code: 'no-alias',
        reason: 'no ssh alias resolves to 10.1.0.99',
        fix: `add \`Host <name>\` / \`HostName 10.1.0.99\` (with its User and IdentityFile) to ${config}`,
      });
    });
  },
);
