// Electron IPC glue with injected fakes (no Electron binary here). The whole path a desktop request takes runs
// as in the app: the renderer's typed Api → the preload's window.api through a contextBridge fake → ipcRenderer
// → registerIpc's handlers on a fake ipcMain → dispatch. The contextBridge fake copies everything crossing it
// with structuredClone, which, like Electron's bridge, keeps an Error's message and drops its code and hint.
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import {
  requestChannel,
  type Api,
  type ApiHandlers,
  type Envelope,
  type PreloadBridge,
} from '../../src/shared/contract';
import { requestSchemas } from '../../src/shared/schemas';
import { Core } from '../../src/main/core/core';
import { ApiError } from '../../src/main/core/api-error';
import type { ApiEventBus } from '../../src/main/api/dispatch';
import {
  forwardEvents,
  isTrustedRendererUrl,
  registerIpc,
  type IpcEventLike,
  type IpcMainLike,
} from '../../src/main/ipc';
import { exposeApi, type ContextBridgeLike, type IpcRendererLike } from '../../src/preload/bridge';
import { preloadTransport } from '../../src/renderer/src/api/preload-transport';
import { createApi } from '../../src/renderer/src/api/typed-client';
import { ApiCallError } from '../../src/renderer/src/api/errors';

const TRUSTED = 'file:///opt/PD%20Console/resources/app.asar/out/renderer/index.html';

/** ipcMain and ipcRenderer joined as Electron joins them; `frameUrl` is the frame the requests come from. */
function fakeIpc(frameUrl = TRUSTED): {
  main: IpcMainLike;
  renderer: IpcRendererLike;
  contents: { id: number; isDestroyed(): boolean; send(channel: string, payload: unknown): void };
} {
  const handlers = new Map<string, (e: IpcEventLike, ...a: unknown[]) => Promise<unknown>>();
  const fromMain = new EventEmitter();
  const event: IpcEventLike = { senderFrame: { url: frameUrl }, sender: { id: 1 } };
  return {
    main: { handle: (c, l) => void handlers.set(c, l), removeHandler: (c) => void handlers.delete(c) },
    renderer: {
      invoke: async (channel, ...args) => {
        const h = handlers.get(channel);
        // Electron's own words when nothing handles a channel.
        if (!h) throw new Error(`No handler registered for '${channel}'`);
        return structuredClone(await h(event, ...structuredClone(args)));
      },
      on: (channel, l) => fromMain.on(channel, l),
      removeListener: (channel, l) => fromMain.off(channel, l),
    },
    contents: {
      id: 1,
      isDestroyed: () => false,
      send: (channel, payload) => fromMain.emit(channel, { sender: 'ipc-event' }, structuredClone(payload)),
    },
  };
}

/** What the page sees of an object exposed through contextBridge: functions proxied, data and errors cloned. */
function fakeContextBridge(): ContextBridgeLike & { exposed: Record<string, unknown> } {
  const exposed: Record<string, unknown> = {};
  const cross = (v: unknown): unknown => {
    if (typeof v === 'function')
      return (...args: unknown[]) => {
        let r: unknown;
        try {
          r = (v as (...a: unknown[]) => unknown)(...args.map(cross));
        } catch (err) {
          throw structuredClone(err);
        }
        if (r instanceof Promise)
          return r.then(cross, (err: unknown) => Promise.reject(structuredClone(err)));
        return cross(r);
      };
    if (Array.isArray(v)) return v.map(cross);
    if (v && typeof v === 'object')
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, cross(x)]));
    return structuredClone(v);
  };
  return { exposed, exposeInMainWorld: (key, api) => void (exposed[key] = cross(api)) };
}

/** The desktop renderer's Api, built the way the app builds it, over the given main-process handlers. */
function desktopApi(handlers: Partial<ApiHandlers>, frameUrl?: string): { api: Api; off: () => void } {
  const ipc = fakeIpc(frameUrl);
  const off = registerIpc(ipc.main, handlers as ApiHandlers, {
    isTrustedSender: (e) => !!e.senderFrame && isTrustedRendererUrl(e.senderFrame.url),
  });
  const bridge = fakeContextBridge();
  exposeApi(bridge, ipc.renderer);
  return { api: createApi(preloadTransport(bridge.exposed.api as PreloadBridge)), off };
}

const failure = async (p: Promise<unknown>): Promise<ApiCallError> => {
  try {
    await p;
  } catch (err) {
    return err as ApiCallError;
  }
  throw new Error('expected the request to fail');
};

describe('Electron IPC and preload', () => {
  it('answers every method of the renderer Api through registerIpc, and none after unregistering', async () => {
    const core = new Core({ shell: 'electron', version: 't' });
    const { api, off } = desktopApi(core.handlers() as never);
    expect(await api.getAppInfo({})).toMatchObject({ shell: 'electron', version: 't' });
    const methods = Object.keys(api).filter((k) => k !== 'on');
    expect(methods.sort()).toEqual(Object.keys(requestSchemas).sort());
    const call = api as unknown as Record<string, (a: unknown) => Promise<unknown>>;
    for (const m of methods) {
      // Arguments no schema accepts, so nothing runs: the refusal must come from dispatch's validation,
      // never from a channel nobody handles.
      const e = await failure(call[m]({ deploymentId: 1 }));
      expect(e.code, m).toBe('bad-arguments');
    }
    off();
    const e = await failure(api.getAppInfo({}));
    expect(e).toBeInstanceOf(ApiCallError);
    expect(e.code).toBe('ipc-failed');
    expect(e.message).toContain("No handler registered for 'api:getAppInfo'");
  });

  it("carries an error's code and hint across the context bridge", async () => {
    const { api } = desktopApi({
      listEvents: async () => {
        throw new ApiError('unknown-deployment', 'no deployment "x" is open', 'Open it from the start page.');
      },
    });
    const e = await failure(api.listEvents({ deploymentId: 'x' }));
    expect(e).toBeInstanceOf(ApiCallError);
    expect({ code: e.code, message: e.message, hint: e.hint }).toEqual({
      code: 'unknown-deployment',
      message: 'no deployment "x" is open',
      hint: 'Open it from the start page.',
    });
    // Why the preload resolves envelopes: an error thrown across the bridge arrives without code and hint.
    const bridge = fakeContextBridge();
    bridge.exposeInMainWorld('t', {
      fail: async () => {
        throw new ApiCallError('c', 'm', 'h');
      },
    });
    const thrown = await failure((bridge.exposed.t as { fail(): Promise<void> }).fail());
    expect(thrown.message).toBe('m');
    expect(thrown.code).toBeUndefined();
    expect(thrown.hint).toBeUndefined();
  });

  it('validates arguments and refuses untrusted frames before the core is touched', async () => {
    let calls = 0;
    const handlers = {
      listEvents: async () => {
        calls++;
        return [];
      },
    };
    const trusted = desktopApi(handlers);
    expect((await failure(trusted.api.listEvents({ deploymentId: 5 as never }))).code).toBe('bad-arguments');
    expect(calls).toBe(0);
    const untrusted = desktopApi(handlers, 'https://evil.example/');
    expect((await failure(untrusted.api.listEvents({ deploymentId: 'x' }))).code).toBe('untrusted-sender');
    expect(calls).toBe(0);
    expect(await trusted.api.listEvents({ deploymentId: 'x' })).toEqual([]);
    expect(calls).toBe(1);
  });

  it('delivers pushed events with their payload only, until unsubscribed', () => {
    const ipc = fakeIpc();
    const bus = new EventEmitter() as ApiEventBus;
    const stop = forwardEvents(bus, ipc.contents);
    const bridge = fakeContextBridge();
    exposeApi(bridge, ipc.renderer);
    const api = createApi(preloadTransport(bridge.exposed.api as PreloadBridge));
    const got: unknown[][] = [];
    const off = api.on('connection', (...args: unknown[]) => got.push(args));
    const payload = { deploymentId: 'demo', status: { state: 'connected' } } as never;
    bus.emit('connection', payload);
    expect(got).toEqual([[payload]]);
    off();
    bus.emit('connection', payload);
    expect(got).toHaveLength(1);
    stop();
    expect(bus.listenerCount('connection')).toBe(0);
  });

  it('trusts only our own renderer URLs', () => {
    expect(isTrustedRendererUrl('file:///app/out/renderer/index.html')).toBe(true);
    expect(isTrustedRendererUrl('file:///etc/passwd')).toBe(false);
    expect(isTrustedRendererUrl('http://localhost:5173/')).toBe(false);
    expect(isTrustedRendererUrl('http://localhost:5173/', 'http://localhost:5173')).toBe(true);
    expect(isTrustedRendererUrl('http://localhost:5174/', 'http://localhost:5173')).toBe(false);
    expect(isTrustedRendererUrl('not a url')).toBe(false);
  });
});

type IpcListener = (event: IpcEventLike, ...args: unknown[]) => Promise<unknown>;

/** ipcMain as Electron has it: one handler per channel (a second handle() on a channel throws), removable. */
function recordingIpcMain(): IpcMainLike & { handlers: Map<string, IpcListener> } {
  const handlers = new Map<string, IpcListener>();
  return {
    handlers,
    handle: (channel, listener) => {
      if (handlers.has(channel)) throw new Error(`Attempted to register a second handler for '${channel}'`);
      handlers.set(channel, listener);
    },
    removeHandler: (channel) => void handlers.delete(channel),
  };
}

/** A handler for every request that notes which one ran and answers with its name and arguments. */
function namedHandlers(): { handlers: ApiHandlers; ran: string[] } {
  const ran: string[] = [];
  const handlers = new Proxy({} as ApiHandlers, {
    get: (_, name) => async (args: unknown) => {
      ran.push(String(name));
      return { name, args };
    },
  });
  return { handlers, ran };
}

const frame = (url: string | null): IpcEventLike => ({
  senderFrame: url === null ? null : { url },
  sender: { id: 1 },
});
const REQUESTS = Object.keys(requestSchemas);

describe('registerIpc', () => {
  it('registers each request of the contract on its own channel, dispatching as that request, and removes them all', async () => {
    const main = recordingIpcMain();
    const { handlers, ran } = namedHandlers();
    const off = registerIpc(main, handlers, { isTrustedSender: () => true });
    expect([...main.handlers.keys()].sort()).toEqual(REQUESTS.map((n) => requestChannel(n as never)).sort());
    expect(main.handlers.has('api:getAppInfo')).toBe(true);
    // A payload no request accepts: each channel's refusal names the request it dispatches to.
    for (const name of REQUESTS) {
      const reply = (await main.handlers.get(requestChannel(name as never))!(
        frame(TRUSTED),
        12345,
      )) as Envelope<unknown>;
      expect(reply, name).toEqual({
        ok: false,
        error: {
          code: 'bad-arguments',
          message: expect.stringMatching(new RegExp(`^invalid arguments for ${name}: `)),
        },
      });
    }
    expect(ran).toEqual([]);
    expect(await main.handlers.get('api:getAppInfo')!(frame(TRUSTED), {})).toEqual({
      ok: true,
      result: { name: 'getAppInfo', args: {} },
    });
    expect(ran).toEqual(['getAppInfo']);
    off();
    expect([...main.handlers.keys()]).toEqual([]);
    // Registering again (a reopened window's app) finds every channel free.
    registerIpc(main, handlers, { isTrustedSender: () => true });
    expect(main.handlers.size).toBe(REQUESTS.length);
  });

  it('asks the sender check about every request and refuses an untrusted frame before arguments are read', async () => {
    const main = recordingIpcMain();
    const { handlers, ran } = namedHandlers();
    const asked: IpcEventLike[] = [];
    registerIpc(main, handlers, {
      isTrustedSender: (e) => {
        asked.push(e);
        return !!e.senderFrame && isTrustedRendererUrl(e.senderFrame.url);
      },
    });
    const untrusted = [frame('https://evil.example/'), frame('file:///tmp/evil.html'), frame(null)];
    for (const name of REQUESTS)
      for (const e of untrusted) {
        // A malformed payload too: an untrusted frame learns nothing about the arguments a request takes.
        for (const payload of [{}, 12345]) {
          const reply = await main.handlers.get(requestChannel(name as never))!(e, payload);
          expect(reply, `${name} from ${e.senderFrame?.url ?? 'a destroyed frame'}`).toEqual({
            ok: false,
            error: { code: 'untrusted-sender', message: `refused ${name} from an untrusted frame` },
          });
          expect(asked.at(-1)).toBe(e);
        }
      }
    expect(asked).toHaveLength(REQUESTS.length * untrusted.length * 2);
    expect(ran).toEqual([]);
    expect(await main.handlers.get('api:getAppInfo')!(frame(TRUSTED), {})).toMatchObject({ ok: true });
    expect(ran).toEqual(['getAppInfo']);
  });

  it('refuses a malformed payload with a message naming the request and the field', async () => {
    const main = recordingIpcMain();
    const { handlers, ran } = namedHandlers();
    registerIpc(main, handlers, { isTrustedSender: () => true });
    const call = (name: string, payload: unknown): Promise<unknown> =>
      main.handlers.get(requestChannel(name as never))!(frame(TRUSTED), payload);
    expect(await call('listEvents', { deploymentId: 5 })).toEqual({
      ok: false,
      error: {
        code: 'bad-arguments',
        message: expect.stringMatching(/^invalid arguments for listEvents: deploymentId: .*string/),
      },
    });
    expect(await call('listEvents', 'demo')).toEqual({
      ok: false,
      error: {
        code: 'bad-arguments',
        message: expect.stringMatching(/^invalid arguments for listEvents: \(root\): /),
      },
    });
    expect(ran).toEqual([]);
    expect(await call('listEvents', { deploymentId: 'demo' })).toEqual({
      ok: true,
      result: { name: 'listEvents', args: { deploymentId: 'demo' } },
    });
  });
});
