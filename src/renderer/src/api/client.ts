// The renderer's single access point to the core: the typed `Api` over the Electron preload's window.api, or
// over the WebSocket bridge in browser mode. Both are transports (transport.ts); the Api is built once.
import type { Api } from '@shared/contract';
import { preloadTransport } from './preload-transport';
import { createApi } from './typed-client';
import type { Transport } from './transport';
import { createWsTransport, type BridgeStatus, type WsTransport } from './ws-bridge';

export type { BridgeStatus } from './ws-bridge';

let bridge: WsTransport | null = null;

function pickTransport(): Transport {
  if (window.api) return preloadTransport(window.api);
  const params = new URLSearchParams(window.location.search);
  const token = params.get('token') ?? sessionStorage.getItem('pdc-token') ?? '';
  if (token) sessionStorage.setItem('pdc-token', token);
  const url = `ws://${window.location.host}/api?token=${encodeURIComponent(token)}`;
  bridge = createWsTransport({ url, WebSocket: window.WebSocket });
  return bridge;
}

export const api: Api = createApi(pickTransport());

/**
 * Browser mode (no Electron preload): the backend may be on another disk than the browser's, so what it writes for
 * the operator (exports) is downloaded from it (GET /exports/<name>, the page's own origin and token cookie).
 */
export const inBrowser = !window.api;

/** The browser-mode connection's state (always open in Electron, where the backend is the app itself). */
export function onBridgeState(l: (s: BridgeStatus) => void): () => void {
  l(bridge?.status() ?? { state: 'open', lost: false, attempt: 0 });
  return bridge?.onStatus(l) ?? (() => undefined);
}

/** Called each time the connection comes back after a loss: what is on screen must be fetched again. */
export function onReconnected(l: () => void): () => void {
  let wasLost = bridge?.status().lost ?? false;
  return onBridgeState((s) => {
    if (wasLost && s.state === 'open') l();
    wasLost = s.lost;
  });
}
