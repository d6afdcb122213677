import type { Api } from '../shared/contract';

declare global {
  interface Window {
    /** Present in the Electron shell; browser mode builds the same object over a WebSocket. */
    api?: Api;
  }
}
