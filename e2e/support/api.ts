// One API request over browser mode's WebSocket, as the renderer makes it (token + same origin).
import WebSocket from 'ws';
import { decodeServerFrame } from '../../src/shared/wire-frame';

export async function apiCall<T = unknown>(appUrl: string, method: string, args: unknown): Promise<T> {
  const u = new URL(appUrl);
  const ws = new WebSocket(`ws://${u.host}/api?token=${u.searchParams.get('token')}`, { origin: u.origin });
  try {
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    ws.send(JSON.stringify({ t: 'req', id: 1, method, args }));
    return await new Promise<T>((resolve, reject) => {
      ws.on('message', (data: WebSocket.RawData, isBinary: boolean) => {
        const f = decodeServerFrame(isBinary ? (data as Buffer) : data.toString());
        if (f.t !== 'res' || f.id !== 1) return;
        if (f.envelope.ok) resolve(f.envelope.result as T);
        else reject(new Error(`${method}: ${f.envelope.error.message}`));
      });
    });
  } finally {
    ws.close();
  }
}
