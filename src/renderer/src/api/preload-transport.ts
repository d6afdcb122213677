// Electron: the preload's window.api ({ invoke, on } over plain data) as a transport. A failed request arrives
// as an envelope, because contextBridge would strip code and hint from a thrown Error; it becomes an
// ApiCallError here, on the page's side of the bridge.
import type { PreloadBridge } from '@shared/contract';
import { ApiCallError } from './errors';
import type { Transport } from './transport';

export function preloadTransport(bridge: PreloadBridge): Transport {
  return {
    invoke: async (method, args) => {
      const env = await bridge.invoke(method, args);
      if (env.ok) return env.result;
      throw new ApiCallError(env.error.code, env.error.message, env.error.hint);
    },
    on: (event, listener) => bridge.on(event, listener),
  };
}
