// curl on the demo host, for the loopback endpoints of the simulated services. It speaks real HTTP to the
// same handlers the forwarded ports use, over an in-memory socket pair, so every fault behaves the same.
import http from 'node:http';
import { Duplex } from 'node:stream';
import { handleHttp } from '../http';
import type { CommandContext } from './context';

/** Two connected in-memory duplex streams (Node 20 has no stream.duplexPair). */
function duplexPair(): [Duplex, Duplex] {
  let a: Duplex | null = null;
  let b: Duplex | null = null;
  const make = (peer: () => Duplex | null): Duplex =>
    new Duplex({
      read() {},
      write(chunk: Buffer, _enc, cb) {
        peer()?.push(chunk);
        cb();
      },
      final(cb) {
        peer()?.push(null);
        cb();
      },
      destroy(err, cb) {
        const p = peer();
        if (p && !p.destroyed) p.destroy();
        cb(err);
      },
    });
  a = make(() => b);
  b = make(() => a);
  return [a, b];
}

interface CurlOpts {
  url: string | null;
  silent: boolean;
  showError: boolean;
  fail: boolean;
  include: boolean;
  head: boolean;
  method: string;
  writeOut: string | null;
  outputNull: boolean;
  maxTimeS: number | null;
  headers: string[];
}

export async function curl(argv: string[], ctx: CommandContext): Promise<number> {
  const { io, sim } = ctx;
  const o: CurlOpts = {
    url: null,
    silent: false,
    showError: false,
    fail: false,
    include: false,
    head: false,
    method: 'GET',
    writeOut: null,
    outputNull: false,
    maxTimeS: null,
    headers: [],
  };
  const args = argv.slice(1);
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const val = (): string => args[++i] ?? '';
    if (
      /^-[a-zA-Z]{2,}$/.test(a) &&
      !['-sS', '-fsS', '-sf', '-fs', '-sSf', '-sfS'].includes(a) &&
      !/^-[sSfiIL]+$/.test(a)
    ) {
      io.err(
        `curl: option ${a}: is unknown\ncurl: try 'curl --help' or 'curl --manual' for more information\n`,
      );
      return 2;
    }
    if (/^-[sSfiIL]+$/.test(a)) {
      for (const c of a.slice(1)) {
        if (c === 's') o.silent = true;
        if (c === 'S') o.showError = true;
        if (c === 'f') o.fail = true;
        if (c === 'i') o.include = true;
        if (c === 'I') o.head = true;
      }
      continue;
    }
    switch (a) {
      case '--silent':
        o.silent = true;
        break;
      case '--show-error':
        o.showError = true;
        break;
      case '--fail':
        o.fail = true;
        break;
      case '--include':
        o.include = true;
        break;
      case '--head':
        o.head = true;
        break;
      case '-X':
      case '--request':
        o.method = val();
        break;
      case '-w':
      case '--write-out':
        o.writeOut = val();
        break;
      case '-o':
      case '--output': {
        const f = val();
        if (f !== '/dev/null') {
          io.err(`curl: (23) Failure writing output to destination\n`);
          return 23;
        }
        o.outputNull = true;
        break;
      }
      case '-m':
      case '--max-time':
      case '--connect-timeout':
        o.maxTimeS = Number(val());
        break;
      case '-H':
      case '--header':
        o.headers.push(val());
        break;
      case '--location':
      case '--compressed':
      case '-k':
      case '--insecure':
        break;
      default:
        if (a.startsWith('-')) {
          io.err(
            `curl: option ${a}: is unknown\ncurl: try 'curl --help' or 'curl --manual' for more information\n`,
          );
          return 2;
        }
        o.url = a;
    }
  }
  const fail = (code: number, msg: string): number => {
    if (!o.silent || o.showError) io.err(`curl: (${code}) ${msg}\n`);
    if (o.writeOut !== null) io.out(o.writeOut.replace(/%\{http_code\}/g, '000').replace(/\\n/g, '\n'));
    return code;
  };
  if (!o.url) {
    io.err(`curl: no URL specified!\ncurl: try 'curl --help' or 'curl --manual' for more information\n`);
    return 2;
  }
  const m = /^(?:(https?):\/\/)?([^/:]+)(?::(\d+))?(\/.*)?$/.exec(o.url);
  if (!m) return fail(3, 'URL using bad/illegal format or missing URL');
  const [, scheme = 'http', host, portText, path = '/'] = m;
  const port = Number(portText ?? (scheme === 'https' ? 443 : 80));
  // Loopback reaches this host; another simulated host's address reaches that host.
  const target = sim.route(host, port);
  if (!target) return fail(6, `Could not resolve host: ${host}`);
  const started = sim.clock.now();
  sim.advance();
  if (!target.portOpen(port) || scheme === 'https') {
    return fail(7, `Failed to connect to ${host} port ${port} after 0 ms: Couldn't connect to server`);
  }
  const [clientSide, serverSide] = duplexPair();
  const server = http.createServer((req, res) => handleHttp(target, port, req, res));
  server.emit('connection', serverSide);
  const method = o.head ? 'HEAD' : o.method;
  return new Promise<number>((resolve) => {
    let settled = false;
    let timer: ReturnType<typeof sim.clock.setTimeout> | null = null;
    const done = (code: number): void => {
      if (settled) return;
      settled = true;
      if (timer) sim.clock.clearTimeout(timer);
      ctx.io.signal.removeEventListener('abort', onAbort);
      clientSide.destroy();
      server.close();
      resolve(code);
    };
    const onAbort = (): void => done(130);
    ctx.io.signal.addEventListener('abort', onAbort, { once: true });
    const req = http.request(
      {
        method,
        path,
        host,
        port,
        headers: Object.fromEntries(
          o.headers.map((h) => [h.split(':')[0].trim(), h.split(':').slice(1).join(':').trim()]),
        ),
        createConnection: () => clientSide as unknown as import('node:net').Socket,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        if (o.fail && status >= 400) {
          res.resume();
          done(fail(22, `The requested URL returned error: ${status}`));
          return;
        }
        const head = `HTTP/1.1 ${status} ${res.statusMessage ?? ''}\r\n${Object.entries(res.headers)
          .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(', ') : v}`)
          .join('\r\n')}\r\n\r\n`;
        if (o.include || o.head) io.out(head);
        res.on('data', (chunk: Buffer) => {
          if (!o.outputNull) io.out(chunk);
        });
        res.on('end', () => {
          if (o.writeOut !== null)
            io.out(o.writeOut.replace(/%\{http_code\}/g, String(status)).replace(/\\n/g, '\n'));
          done(0);
        });
        res.on('error', () => done(fail(56, 'Failure when receiving data from the peer')));
      },
    );
    req.on('error', () => done(fail(56, 'Recv failure: Connection reset by peer')));
    if (o.maxTimeS !== null && o.maxTimeS > 0) {
      timer = sim.clock.setTimeout(() => {
        const elapsed = Math.round(sim.clock.now() - started);
        done(fail(28, `Operation timed out after ${elapsed} milliseconds with 0 bytes received`));
      }, o.maxTimeS * 1000);
    }
    req.end();
  });
}
