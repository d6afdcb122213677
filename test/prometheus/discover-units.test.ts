// Recognising a Prometheus-API engine by what a unit runs, and reading its listen address, config file and
// retention from the flags as each engine parses them, from `systemctl show` text as systemd prints it.
import { describe, expect, it } from 'vitest';
import { findPromUnits } from '../../src/main/core/prometheus/discover-units';

/**
 * A unit as discovery reads it: its unit file (ExecStart in systemd.syntax, `$VAR` left for exec time) and its
 * `systemctl show` block, where systemd prints argv[] joined with plain spaces, unquoted.
 */
const unit = (name: string, execStart: string, serviceLines: string[] = []) => ({
  unit: name,
  cat: [`# /etc/systemd/system/${name}`, '[Service]', ...serviceLines, `ExecStart=${execStart}`, ''].join(
    '\n',
  ),
  show: [
    `Id=${name}`,
    'ActiveState=active',
    `ExecStart={ path=${execStart.split(' ')[0]} ; argv[]=${execStart.replace(/"/g, '')} ; ignore_errors=no ; start_time=[n/a] ; stop_time=[n/a] ; pid=0 ; code=(null) ; status=0/0 }`,
    ...serviceLines
      .filter((l) => l.startsWith('EnvironmentFile='))
      .map((l) => `EnvironmentFiles=${l.slice('EnvironmentFile='.length)} (ignore_errors=no)`),
    'MainPID=0',
  ].join('\n'),
});

describe('findPromUnits', () => {
  it("reads Debian's prometheus.service: $ARGS from /etc/default/prometheus", () => {
    const [f] = findPromUnits('gpu-a', [
      {
        ...unit('prometheus.service', '/usr/bin/prometheus $ARGS', [
          'EnvironmentFile=/etc/default/prometheus',
        ]),
        envFiles: {
          '/etc/default/prometheus':
            '# Set the command-line arguments to pass to the server.\nARGS="--config.file=/etc/prometheus/prometheus.yml --web.listen-address=0.0.0.0:9091 --storage.tsdb.retention.time=30d"\n',
        },
      },
    ]);
    expect(f).toMatchObject({
      unit: 'prometheus.service',
      hostId: 'gpu-a',
      engine: 'prometheus',
      activeState: 'active',
      listenAddress: '0.0.0.0:9091',
      url: 'http://127.0.0.1:9091',
      configFile: '/etc/prometheus/prometheus.yml',
      retention: '30d',
      notes: [],
    });
  });

  it('says which $VAR could not be read, and falls back to the default listen address', () => {
    const [f] = findPromUnits('gpu-a', [unit('prometheus.service', '/usr/bin/prometheus $ARGS')]);
    expect(f!.listenAddress).toBe('0.0.0.0:9090');
    expect(f!.notes.join('\n')).toContain('uses $ARGS, which is set in no Environment= or EnvironmentFile=');
    expect(f!.notes.join('\n')).toContain('no -web.listen-address flag: prometheus listens on 0.0.0.0:9090');
  });

  it('reads kingpin flags written as two words, and a route prefix', () => {
    const [f] = findPromUnits('h', [
      unit(
        'prom.service',
        '/opt/prometheus/prometheus --config.file /srv/prom.yml --web.listen-address 127.0.0.1:19090 --web.route-prefix=/prom/',
      ),
    ]);
    expect(f).toMatchObject({ url: 'http://127.0.0.1:19090/prom', configFile: '/srv/prom.yml' });
  });

  it('recognises vmagent and victoria-metrics with Go flags and their defaults', () => {
    const found = findPromUnits('h', [
      unit(
        'vmagent.service',
        '/usr/local/bin/vmagent-prod -promscrape.config=/etc/vmagent/scrape.yml -remoteWrite.url=http://vm:8428/api/v1/write',
      ),
      unit(
        'victoriametrics.service',
        '/usr/bin/victoria-metrics -httpListenAddr=127.0.0.1:8428 -retentionPeriod=90d -promscrape.config /etc/vm/scrape.yml',
      ),
    ]);
    expect(found).toEqual([
      expect.objectContaining({
        engine: 'vmagent',
        listenAddress: ':8429',
        url: 'http://127.0.0.1:8429',
        configFile: '/etc/vmagent/scrape.yml',
      }),
      expect.objectContaining({
        engine: 'victoria-metrics',
        url: 'http://127.0.0.1:8428',
        configFile: '/etc/vm/scrape.yml',
        retention: '90d',
      }),
    ]);
  });

  it('finds it under a shell wrapper, and ignores exporters and units that only mention prometheus', () => {
    const found = findPromUnits('h', [
      unit('p.service', '/bin/bash -c "exec /usr/bin/prometheus --web.listen-address=:9095"'),
      unit('prometheus-node-exporter.service', '/usr/bin/prometheus-node-exporter $ARGS'),
      unit('backup.service', '/usr/bin/rsync -a /var/lib/prometheus /backup'),
    ]);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ unit: 'p.service', url: 'http://127.0.0.1:9095' });
  });
});
