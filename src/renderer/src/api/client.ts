// The renderer's single access point to the core: window.api in Electron, a WebSocket bridge in browser mode.
import type { Api } from '@shared/contract';
import { createWsApi, type BridgeState } from './ws-bridge';

type BridgeListener = (s: BridgeState, detail?: string) => void;
const bridgeListeners = new Set<BridgeListener>();
let bridgeState: { state: BridgeState; detail?: string } = { state: 'open' };

function pickApi(): Api {
  if (window.api) return window.api;
  const params = new URLSearchParams(window.location.search);
  const token = params.get('token') ?? sessionStorage.getItem('pdc-token') ?? '';
  if (token) sessionStorage.setItem('pdc-token', token);
  const url = `ws://${window.location.host}/api?token=${encodeURIComponent(token)}`;
  bridgeState = { state: 'connecting' };
  return createWsApi(url, (state, detail) => {
    bridgeState = { state, detail };
    for (const l of bridgeListeners) l(state, detail);
  });
}

export const api: Api = pickApi();

export function onBridgeState(l: BridgeListener): () => void {
  bridgeListeners.add(l);
  l(bridgeState.state, bridgeState.detail);
  return () => bridgeListeners.delete(l);
}
