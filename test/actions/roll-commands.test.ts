// What the roll reads from nvidia-smi and ss: a reading that is not the expected table never counts as
// "free", since a worker would then be started on busy GPUs or a held port.
import { describe, expect, it } from 'vitest';
import {
  gpuAppsCommand,
  parseGpuApps,
  parseListeningPorts,
  unitVerbCommand,
} from '../../src/main/core/actions/roll-commands';

describe('roll commands', () => {
  it('builds quoted stop/start and nvidia-smi lines and refuses unsafe names', () => {
    expect(unitVerbCommand('stop', 'sglang-decode-1.service', 'sudo')).toBe(
      'sudo -n systemctl --no-block stop sglang-decode-1.service',
    );
    expect(unitVerbCommand('start', 'sglang-decode-1.service', 'root')).toBe(
      'systemctl --no-block start sglang-decode-1.service',
    );
    expect(() => unitVerbCommand('stop', 'x; rm -rf /', 'root')).toThrow(/refusing to send unit name/);
    expect(gpuAppsCommand([4, 5])).toBe(
      'nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory --format=csv,noheader,nounits -i 4,5',
    );
    expect(() => gpuAppsCommand([-1])).toThrow(/GPU index -1/);
  });

  it('reads compute processes, none, and a broken answer as not free', () => {
    expect(parseGpuApps('')).toEqual([]);
    expect(parseGpuApps('No running processes found\n')).toEqual([]);
    expect(parseGpuApps('4242, GPU-9f1c, 70312\n4243, GPU-9f1d, [N/A]\n')).toEqual([
      { pid: 4242, gpuUuid: 'GPU-9f1c', usedMiB: 70312 },
      { pid: 4243, gpuUuid: 'GPU-9f1d', usedMiB: null },
    ]);
    expect(
      parseGpuApps('Unable to determine the device handle for GPU0000:5D:00.0: Unknown Error\n'),
    ).toBeNull();
  });

  it('reads listening ports from ss -ltn in its IPv4, IPv6 and wildcard forms', () => {
    const out = [
      'State  Recv-Q Send-Q Local Address:Port  Peer Address:Port Process',
      'LISTEN 0      4096   127.0.0.53%lo:53         0.0.0.0:*',
      'LISTEN 0      2048         0.0.0.0:30200      0.0.0.0:*',
      'LISTEN 0      128             [::]:22            [::]:*',
      'LISTEN 0      511                *:8998             *:*',
    ].join('\n');
    expect([...parseListeningPorts(out)!].sort((a, b) => a - b)).toEqual([22, 53, 8998, 30200]);
    expect(parseListeningPorts('State  Recv-Q Send-Q Local Address:Port Peer Address:Port\n')).toEqual(
      new Set(),
    );
    expect(parseListeningPorts('ss: command not found')).toBeNull();
  });
});
