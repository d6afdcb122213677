// A GPU host whose decode server and router serve families no supported era lists, reached the way a real one
// is: a real OpenSSH sshd on 127.0.0.1 (test/fixtures/sshd.ts), its TCP forwarding to real loopback HTTP
// servers. systemd, journalctl and nvidia-smi are answered by the demo host's command emulation; their port
// numbers are rewritten to the fixture's ephemeral ports, so discovery finds the units where the fixture
// listens. The decode server's and the router's /metrics are fixture text (test/signals/future-fixture.ts: a
// real era's scrape plus hypothetical future families); everything else (prefill, /health, /server_info,
// /workers…) is the demo simulation's own HTTP, proxied. The demo itself emits nothing it should not.
import http from 'node:http';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { HostConfig } from '@shared/domain';
import { systemClock } from '../../src/main/core/clock';
import { DemoHttpServers, DemoSimulation, DEMO_PORTS, emulateCommand } from '../../src/main/demo';
import { keygen, startSshd, sshdUnavailableReason, type Sshd } from '../fixtures/sshd';
import { futureRouterText, futureServerText } from '../signals/future-fixture';

/** The ~/.ssh/config alias of the fixture host (`pd-console … --host future-gpu`). */
export const ALIAS = 'future-gpu';

export interface FutureHost {
  /** Connect with this: the alias, resolved through the home's ~/.ssh/config. */
  host: HostConfig;
  /** A home folder whose ~/.ssh/known_hosts already trusts the sshd (createApp's homeDir). */
  home: string;
  /** The same host as the start page's form takes it. */
  port: number;
  user: string;
  keyFile: string;
  /** SSH logins the sshd has accepted so far (each one is a connection a client opened). */
  logins(): number;
  stop(): Promise<void>;
}

export { sshdUnavailableReason };

const listen = (srv: http.Server): Promise<number> =>
  new Promise((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => resolve((srv.address() as AddressInfo).port));
  });

export interface FutureHostOptions {
  /** Decode's /metrics answers this instead of the fixture text (e.g. an error page a proxy serves). */
  decodeMetrics?: { status: number; body: string };
}

export async function startFutureHost(opts: FutureHostOptions = {}): Promise<FutureHost> {
  const sim = new DemoSimulation({ clock: systemClock });
  const demoHttp = new DemoHttpServers(sim);
  const real = await demoHttp.listen();
  const servers: http.Server[] = [];
  /** simulated port → the fixture's port */
  const port: Record<number, number> = {};
  for (const simPort of [
    DEMO_PORTS.prefill,
    DEMO_PORTS.decode,
    DEMO_PORTS.routerApi,
    DEMO_PORTS.routerMetrics,
  ]) {
    const fixture =
      simPort === DEMO_PORTS.decode
        ? futureServerText()
        : simPort === DEMO_PORTS.routerMetrics
          ? futureRouterText()
          : null;
    const answer = simPort === DEMO_PORTS.decode ? opts.decodeMetrics : undefined;
    const srv = http.createServer((req, res) => {
      if (answer && req.url?.split('?')[0] === '/metrics') {
        res.writeHead(answer.status, { 'content-type': 'text/plain; charset=utf-8' });
        return void res.end(answer.body);
      }
      if (fixture !== null && req.url?.split('?')[0] === '/metrics') {
        res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
        return void res.end(fixture);
      }
      const up = http.request(
        { host: '127.0.0.1', port: real[simPort], path: req.url, method: req.method, headers: req.headers },
        (r) => {
          if (req.url?.split('?')[0] !== '/workers') {
            res.writeHead(r.statusCode ?? 502, r.headers);
            return void r.pipe(res);
          }
          // The router's worker list names the simulated ports; rewritten like the commands' output, it agrees
          // with the router's ExecStart, as a real router's does.
          const chunks: Buffer[] = [];
          r.on('data', (c: Buffer) => chunks.push(c));
          r.on('end', () => {
            const body = Buffer.concat(chunks)
              .toString('utf8')
              .replace(rewrite, (p) => String(port[Number(p)]));
            const { 'content-length': _, ...headers } = r.headers;
            res.writeHead(r.statusCode ?? 502, headers);
            res.end(body);
          });
        },
      );
      up.on('error', (err) => {
        res.writeHead(502);
        res.end(`fixture proxy to the demo's port ${simPort}: ${err.message}`);
      });
      req.pipe(up);
    });
    servers.push(srv);
    port[simPort] = await listen(srv);
  }
  const rewrite = new RegExp(`\\b(${Object.keys(port).join('|')})\\b`, 'g');

  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'pd-future-host-'));
  const home = path.join(root, 'home');
  await fs.mkdir(path.join(home, '.ssh'), { recursive: true, mode: 0o700 });
  const key = await keygen(path.join(root, 'user_key'), { comment: 'future-host' });
  let sshd: Sshd | undefined;
  try {
    sshd = await startSshd({
      authorizedKeys: [key.publicLine],
      answer: async (command, user) => {
        const r = await emulateCommand(sim, command, user || 'root');
        return {
          stdout: r.stdout.replace(rewrite, (p) => String(port[Number(p)])),
          stderr: r.stderr,
          exitCode: r.exitCode,
        };
      },
    });
    await fs.writeFile(
      path.join(home, '.ssh', 'known_hosts'),
      `[127.0.0.1]:${sshd.port} ${sshd.hostKeyLine}\n`,
    );
    await fs.writeFile(
      path.join(home, '.ssh', 'config'),
      [
        `Host ${ALIAS}`,
        '  HostName 127.0.0.1',
        `  Port ${sshd.port}`,
        `  User ${os.userInfo().username}`,
        `  IdentityFile ${key.privateFile}`,
        '  IdentitiesOnly yes',
        '',
      ].join('\n'),
    );
  } catch (err) {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    await demoHttp.close();
    throw err;
  }
  const started = sshd;
  return {
    host: { id: ALIAS, label: ALIAS, kind: 'ssh', alias: ALIAS },
    home,
    port: started.port,
    user: os.userInfo().username,
    keyFile: key.privateFile,
    logins: () => (started.log().match(/Accepted publickey/g) ?? []).length,
    stop: async () => {
      await started.stop();
      for (const s of servers) s.closeAllConnections();
      await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
      await demoHttp.close();
      await fs.rm(root, { recursive: true, force: true });
    },
  };
}
