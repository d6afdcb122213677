// HTTP through the SSH connection. ssh2's own HTTPAgent opens a new SSH connection per socket, which is
// wrong for 1 Hz polling; this agent opens `direct-tcpip` channels on the one long-lived client and keeps
// them alive between requests: one channel per endpoint, so a host's channels are its endpoints (plus its
// shells and journal follow) however many requests a round makes. Each tunnel takes a slot of the link's
// channel budget for as long as it is open; a full budget may take back a tunnel nobody is using (`closeIdle`),
// which the endpoint's next request opens again. An https URL is spoken to in TLS over the same tunnel (or over
// the TCP socket of a direct agent), verified before the request may use it; never in plain HTTP.
import http from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import type { Client } from 'ssh2';
import { systemClock } from '../clock';
import { Semaphore } from './semaphore';
import { secureStream, TlsError, type TlsTarget } from './tls-stream';
import { systemTrust, type TrustStore } from './trust-store';

/** The budget kinds: a tunnel waiting for a slot, and a session channel (exec, shell, follow) waiting. */
export const TUNNEL = 'tunnel';
export const SESSION = 'session';

export class ForwardingAgent extends http.Agent {
  /** Releases of the budget slots this agent's tunnels hold; all given back when the agent is destroyed. */
  private readonly held = new Set<() => void>();

  constructor(
    private readonly client: Client,
    private readonly label: string,
    private readonly slots: Semaphore,
  ) {
    // One channel per endpoint (host:port): a round's /metrics, /health and /server_info of one server take
    // turns on it (`inTurn`) instead of each opening a channel of its own (a 4-worker host held 8). A channel
    // that dies (a timeout destroys it, a dropped link closes it) leaves the free list, and the next turn opens
    // a fresh one.
    super({ keepAlive: true, maxSockets: 1, maxFreeSockets: 1, keepAliveMsecs: 15_000 });
    // A tunnel that goes idle while a command waits for a slot of the budget is given back to it: it was only
    // kept for speed, and the wait would otherwise last until something else closed. (Not for another tunnel:
    // endpoints taking each other's channels would churn every round.) Checked once Node has filed the socket
    // as free, so a request it handed the socket to keeps it.
    this.on('free', (socket: Duplex) =>
      setImmediate(() => {
        if (this.slots.queuedFor(SESSION) > this.closing.size && this.isFree(socket)) this.give(socket);
      }),
    );
  }

  /**
   * Tunnels closed for a waiting command whose close has not arrived yet: each waiter is owed one, not one per
   * tunnel that goes idle while the first close is on its way.
   */
  private readonly closing = new Set<Duplex>();

  private give(socket: Duplex): void {
    this.closing.add(socket);
    socket.once('close', () => this.closing.delete(socket));
    socket.destroy();
  }

  /** When each endpoint last started an exchange: the longest idle tunnel is the one given back. */
  private readonly lastUsed = new Map<string, number>();

  /** One turn at a time per endpoint: a semaphore of one for each endpoint this agent has talked to. */
  private readonly turns = new Map<string, Semaphore>();

  /**
   * Runs `exchange` once every exchange started earlier with the same endpoint has settled. The turns are ours,
   * not Node's request queue: Node creates a second socket for a request that arrives while the first is still
   * being opened (the tunnel opens asynchronously), and a queued request handed the socket inside the previous
   * response's 'free' stalled against the demo's servers until its timeout. One exchange in flight per
   * endpoint means Node only ever reuses the free channel or opens one.
   */
  inTurn<T>(endpoint: string, exchange: () => Promise<T>): Promise<T> {
    this.lastUsed.set(endpoint, performance.now());
    let turn = this.turns.get(endpoint);
    if (!turn) this.turns.set(endpoint, (turn = new Semaphore(1)));
    return turn.run(exchange);
  }

  override getName(options?: http.ClientRequestArgs): string {
    return poolName(super.getName(options), options);
  }

  override createConnection(
    options: http.ClientRequestArgs,
    callback?: (err: Error | null, stream: Duplex) => void,
  ): Duplex | undefined {
    const host = String(options.host ?? options.hostname ?? '127.0.0.1');
    const port = Number(options.port ?? 80);
    const opened = (err: Error | undefined, channel: Duplex | undefined): void => {
      if (err) {
        // RFC 4254 §5.1 reasons: 1 administratively prohibited (AllowTcpForwarding no), 2 connect failed.
        const reason = (err as Error & { reason?: number }).reason;
        const prohibited = reason === 1 || /prohibited/i.test(err.message);
        const refused =
          !prohibited && (reason === 2 || /Connection refused|Connect failed/i.test(err.message));
        const e = Object.assign(
          new Error(
            prohibited
              ? `sshd on ${this.label} does not allow port forwarding, so ${host}:${port} cannot be scraped (set AllowTcpForwarding yes for your user)`
              : refused
                ? `connection refused by ${host}:${port} on ${this.label} (nothing listening, or the service is starting)`
                : `could not open a tunnel to ${host}:${port} on ${this.label}: ${err.message}`,
          ),
          { code: prohibited ? 'EPROHIBITED' : refused ? 'ECONNREFUSED' : 'ETUNNEL' },
        );
        callback?.(e, undefined as unknown as Duplex);
        return;
      }
      const tlsTarget = tlsTargetOf(options);
      if (tlsTarget) {
        secureStream(channel!, tlsTarget).then(
          (s) => callback?.(null, s),
          (e: Error) => callback?.(e, undefined as unknown as Duplex),
        );
        return;
      }
      // http expects a net.Socket; ssh2 channels lack these socket-only methods.
      const ch = channel as unknown as Duplex & Record<string, unknown>;
      for (const m of ['setKeepAlive', 'setNoDelay', 'setTimeout', 'ref', 'unref']) ch[m] ??= () => ch;
      callback?.(null, ch);
    };
    void this.slots.hold(TUNNEL).then((release) => {
      this.held.add(release);
      const give = (): void => {
        this.held.delete(release);
        release();
      };
      try {
        this.client.forwardOut('127.0.0.1', 0, host, port, (err, channel) => {
          if (err) give();
          else channel.once('close', give);
          opened(err, channel);
        });
      } catch (err) {
        // ssh2 throws "Not connected" once the link is gone. Node's agent calls this from a closing socket's
        // handler to serve a queued request, where a throw would end the process: fail that request instead.
        give();
        opened(err as Error, undefined);
      }
    });
    return undefined;
  }

  /**
   * Closes one kept-alive tunnel no request is using, for a budget that is full; says whether there was one.
   * Its slot comes back when the channel's close arrives.
   */
  closeIdle(): boolean {
    if (this.slots.queuedFor(SESSION) <= this.closing.size) return this.closing.size > 0;
    let oldest: { socket: Duplex; at: number } | null = null;
    for (const [name, list] of Object.entries(this.freeSockets)) {
      const socket = list?.find((x) => !x.destroyed);
      // Node names a pool "host:port:" (plus options); inTurn's endpoints are "host:port".
      const at = this.lastUsed.get(name.split(':').slice(0, 2).join(':')) ?? 0;
      if (socket && (!oldest || at < oldest.at)) oldest = { socket, at };
    }
    if (oldest) this.give(oldest.socket);
    return oldest !== null;
  }

  private isFree(socket: Duplex): boolean {
    return Object.values(this.freeSockets).some((list) => list?.includes(socket as never));
  }

  override destroy(): void {
    super.destroy();
    // A link that dropped may never deliver its channels' close: their slots are free with the link.
    for (const release of [...this.held]) release();
    this.held.clear();
  }
}

/** The TLS target a request carries in its options (set by boundedRequest for an https URL). */
type TlsRequestArgs = http.ClientRequestArgs & { tlsTarget?: TlsTarget };

function tlsTargetOf(options: http.ClientRequestArgs | undefined): TlsTarget | undefined {
  return (options as TlsRequestArgs | undefined)?.tlsTarget;
}

/** A pool per endpoint and per TLS trust: a plain channel is never handed to an https request, nor back. */
function poolName(base: string, options: http.ClientRequestArgs | undefined): string {
  const t = tlsTargetOf(options);
  return t ? `${base}:tls:${t.host}:${t.trust.id}` : base;
}

/**
 * The agent of a URL the laptop dials itself: plain TCP for http, TLS over the TCP socket for https (verified
 * the same way as through a tunnel). A plain http.Agent is refused for https URLs, as it would speak plain HTTP.
 */
export class DirectAgent extends http.Agent {
  override getName(options?: http.ClientRequestArgs): string {
    return poolName(super.getName(options), options);
  }

  override createConnection(
    options: http.ClientRequestArgs,
    callback?: (err: Error | null, stream: Duplex) => void,
  ): Duplex | undefined {
    const target = tlsTargetOf(options);
    if (!target) return super.createConnection(options, callback) ?? undefined;
    secureStream(net.createConnection({ host: target.host, port: target.port }), target).then(
      (s) => callback?.(null, s),
      (e: Error) => callback?.(e, undefined as unknown as Duplex),
    );
    return undefined;
  }
}

/** The port a URL names, or its scheme's own (80, 443). */
export function portOf(u: URL): number {
  return Number(u.port || (u.protocol === 'https:' ? 443 : 80));
}

export interface HttpResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The body as received; `body` is its lossy UTF-8 decoding (invalid bytes become U+FFFD). */
  bytes: Buffer;
  /** URL after redirects. */
  url: string;
  durationMs: number;
}

export interface HttpGetOptions {
  timeoutMs?: number;
  maxBytes?: number;
  headers?: Record<string, string>;
  maxRedirects?: number;
}

export class HttpError extends Error {
  constructor(
    message: string,
    readonly code: 'timeout' | 'too-large' | 'refused' | 'network' | 'redirects' | 'encoding' | 'tls',
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/**
 * GET a URL through the agent, bounded in time and size, following redirects (older SGLang answered
 * /metrics with 307 → /metrics/). Real-time timeouts: the network does not run faster in tests.
 */
export async function httpGet(
  agent: http.Agent,
  url: string,
  opts: HttpGetOptions = {},
): Promise<HttpResponse> {
  const started = Date.now();
  let current = url;
  for (let hop = 0; hop <= (opts.maxRedirects ?? 3); hop++) {
    const res = await getOnce(agent, current, opts);
    if ([301, 302, 303, 307, 308].includes(res.status) && typeof res.headers.location === 'string') {
      current = new URL(res.headers.location, current).toString();
      continue;
    }
    return withText(
      { status: res.status, headers: res.headers, url: current, durationMs: Date.now() - started },
      decodedBody(res, current, opts.maxBytes ?? DEFAULT_MAX_BYTES),
    );
  }
  throw new HttpError(`${url}: more than ${opts.maxRedirects ?? 3} redirects`, 'redirects');
}

const DEFAULT_MAX_BYTES = 16 * 1024 * 1024;

/** One output chunk holds a whole SGLang scrape (30–60 kB of text): one buffer per decompression, not four. */
const GUNZIP_CHUNK = 64 * 1024;

/**
 * The body as the server meant it. A caller that asks for gzip (a scrape: prometheus_client, which SGLang serves
 * /metrics with, compresses for it, ~15× fewer bytes through the SSH link and its VPN) gets it decompressed
 * here, bounded by the same size cap as the bytes on the wire. An encoding nobody asked for is refused by name.
 */
function decodedBody(res: BoundedResponse, url: string, maxBytes: number): Buffer {
  const encoding = String(res.headers['content-encoding'] ?? '')
    .trim()
    .toLowerCase();
  // A HEAD, a 204 or an empty error answer may carry the header with no body at all.
  if (encoding === '' || encoding === 'identity' || res.bytes.length === 0) return res.bytes;
  if (encoding !== 'gzip' && encoding !== 'x-gzip')
    throw new HttpError(
      `${url}: answered with Content-Encoding "${encoding}", which the console did not ask for and cannot read`,
      'encoding',
    );
  try {
    return gunzipSync(res.bytes, { maxOutputLength: maxBytes, chunkSize: GUNZIP_CHUNK });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ERR_BUFFER_TOO_LARGE')
      throw new HttpError(
        `${url}: response larger than ${(maxBytes / 1024 / 1024).toFixed(0)} MB once decompressed; stopped reading`,
        'too-large',
      );
    throw new HttpError(
      `${url}: the body says it is gzip-compressed but does not decompress (${e.message}); ` +
        'the server or a proxy in between sent it damaged',
      'encoding',
    );
  }
}

function getOnce(agent: http.Agent, url: string, opts: HttpGetOptions): Promise<BoundedResponse> {
  const timeoutMs = opts.timeoutMs ?? 5000;
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_BYTES;
  return boundedRequest(
    agent,
    { method: 'GET', url, headers: { 'accept-encoding': 'identity', ...opts.headers } },
    { timeoutMs, maxBytes },
    {
      tooLarge: `${url}: response larger than ${(maxBytes / 1024 / 1024).toFixed(0)} MB; stopped reading`,
      timeout: `${url}: no complete response within ${timeoutMs / 1000} s`,
      failed: (e, phase) => (phase === 'response' ? `${url}: ${e.message}` : e.message),
    },
  );
}

export interface BoundedResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The body as received (empty when a sink took it); `body` is its lossy UTF-8 decoding (invalid bytes become U+FFFD). */
  bytes: Buffer;
  /** Bytes of body received, whether kept in `bytes` or given to a sink. */
  received: number;
}

/** Takes a response body chunk by chunk; a throw stops the exchange and is its error. */
export interface BodySink {
  write(chunk: Buffer): void;
  end(): void;
}

export interface BoundedRequestSpec {
  method: string;
  url: string;
  headers: http.OutgoingHttpHeaders;
  body?: Buffer;
  /** Cancels the exchange (node destroys the request with an AbortError). */
  signal?: AbortSignal;
  /** Verifies an https URL's server (default: the system's CAs). */
  trust?: TrustStore;
  /**
   * Reads the body as it arrives instead of keeping it: asked with the status and headers once they are in,
   * a null answer keeps the body as usual. The size cap still applies.
   */
  sink?: (head: { status: number; headers: http.IncomingHttpHeaders }) => BodySink | null;
}

/** How a caller words each way a bounded request fails (its errors name the request as the caller knows it). */
export interface BoundedRequestWording {
  tooLarge: string;
  timeout: string;
  /** A socket or tunnel error before the response (`request`) or while reading it (`response`). */
  failed: (e: Error, phase: 'request' | 'response') => string;
}

/**
 * Adds `bytes` and a `body` decoded from them on first read: a /metrics scrape (up to 16 MB every second)
 * is parsed from its bytes and never needs the whole text, while JSON and error paths read `body` as before.
 */
function withText<T extends object>(head: T, bytes: Buffer): T & { body: string; bytes: Buffer } {
  let text: string | undefined;
  return Object.defineProperty({ ...head, bytes }, 'body', {
    enumerable: true,
    get: () => (text ??= bytes.toString('utf8')),
  }) as T & { body: string; bytes: Buffer };
}

/**
 * One HTTP exchange through the agent, bounded by a real-time timeout and a response size cap; the
 * request is destroyed on the first failure. No redirects: callers decide whether to follow them.
 */
export function boundedRequest(
  agent: http.Agent,
  spec: BoundedRequestSpec,
  bounds: { timeoutMs: number; maxBytes: number },
  wording: BoundedRequestWording,
): Promise<BoundedResponse> {
  if (!(agent instanceof ForwardingAgent)) return exchangeOnce(agent, spec, bounds, wording);
  // The wait for the endpoint's channel counts against the caller's time bound, as a slow socket would.
  const started = Date.now();
  const u = new URL(spec.url);
  return agent.inTurn(`${u.hostname}:${portOf(u)}`, () => {
    const left = bounds.timeoutMs - (Date.now() - started);
    if (left <= 0) return Promise.reject(new HttpError(wording.timeout, 'timeout'));
    return exchangeOnce(agent, spec, { ...bounds, timeoutMs: left }, wording);
  });
}

function exchangeOnce(
  agent: http.Agent,
  spec: BoundedRequestSpec,
  bounds: { timeoutMs: number; maxBytes: number },
  wording: BoundedRequestWording,
): Promise<BoundedResponse> {
  const u = new URL(spec.url);
  const secure = u.protocol === 'https:';
  if (secure && !(agent instanceof ForwardingAgent || agent instanceof DirectAgent))
    return Promise.reject(
      new HttpError(
        wording.failed(
          new Error('this connection cannot speak TLS, and an https URL is never sent in plain HTTP'),
          'request',
        ),
        'tls',
      ),
    );
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (err: Error | null, value?: BoundedResponse): void => {
      if (done) return;
      done = true;
      systemClock.clearTimeout(timer);
      if (err) {
        req.destroy();
        reject(err);
      } else resolve(value!);
    };
    const options: TlsRequestArgs = {
      agent,
      host: u.hostname,
      port: portOf(u),
      path: u.pathname + u.search,
      method: spec.method,
      headers: spec.headers,
      ...(spec.signal ? { signal: spec.signal } : {}),
      ...(secure
        ? { tlsTarget: { host: u.hostname, port: portOf(u), trust: spec.trust ?? systemTrust() } }
        : {}),
    };
    const req = http.request(options, (res) => {
      const head = { status: res.statusCode ?? 0, headers: res.headers };
      let sink: BodySink | null;
      try {
        sink = spec.sink?.(head) ?? null;
      } catch (e) {
        finish(e as Error);
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > bounds.maxBytes) {
          finish(new HttpError(wording.tooLarge, 'too-large'));
          return;
        }
        if (!sink) chunks.push(c);
        else {
          try {
            sink.write(c);
          } catch (e) {
            finish(e as Error);
          }
        }
      });
      res.on('end', () => {
        try {
          sink?.end();
        } catch (e) {
          finish(e as Error);
          return;
        }
        finish(null, withText({ ...head, received: size }, Buffer.concat(chunks)));
      });
      res.on('error', (e) => finish(new HttpError(wording.failed(e, 'response'), 'network')));
    });
    const timer = systemClock.setTimeout(
      () => finish(new HttpError(wording.timeout, 'timeout')),
      bounds.timeoutMs,
    );
    req.on('error', (e: NodeJS.ErrnoException) =>
      finish(
        e instanceof TlsError
          ? new HttpError(wording.failed(e, 'request'), 'tls')
          : new HttpError(wording.failed(e, 'request'), e.code === 'ECONNREFUSED' ? 'refused' : 'network'),
      ),
    );
    req.end(spec.body);
  });
}
