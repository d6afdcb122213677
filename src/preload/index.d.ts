import type { PreloadBridge } from '../shared/contract';

declare global {
  interface Window {
    /** Present in the Electron shell (the preload's two functions); browser mode uses a WebSocket instead. */
    api?: PreloadBridge;
  }
}
