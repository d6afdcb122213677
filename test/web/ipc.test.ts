// Electron IPC glue with injected fakes (no Electron binary here): handlers derive from the contract,
// untrusted senders are refused before the core is touched, arguments are validated.
import { describe, expect, it } from 'vitest';
import { REQUEST_NAMES, requestChannel } from '../../src/shared/contract';
import { Core } from '../../src/main/core/core';
import { isTrustedRendererUrl, registerIpc, type IpcEventLike, type IpcMainLike } from '../../src/main/ipc';

function fakeIpcMain(): IpcMainLike & {
  handlers: Map<string, (e: IpcEventLike, ...a: unknown[]) => Promise<unknown>>;
} {
  const handlers = new Map();
  return { handlers, handle: (c, l) => handlers.set(c, l), removeHandler: (c) => handlers.delete(c) };
}

describe('Electron IPC registration', () => {
  it('registers exactly one handler per contract method and removes them all', () => {
    const ipc = fakeIpcMain();
    const off = registerIpc(ipc, new Core({ shell: 'electron', version: 't' }).handlers() as never, {
      isTrustedSender: () => true,
    });
    expect([...ipc.handlers.keys()].sort()).toEqual(REQUEST_NAMES.map(requestChannel).sort());
    off();
    expect(ipc.handlers.size).toBe(0);
  });

  it('refuses untrusted senders and validates arguments of trusted ones', async () => {
    const ipc = fakeIpcMain();
    const trustedUrl = 'file:///opt/PD%20Console/resources/app.asar/out/renderer/index.html';
    registerIpc(ipc, new Core({ shell: 'electron', version: 't' }).handlers() as never, {
      isTrustedSender: (e) => !!e.senderFrame && isTrustedRendererUrl(e.senderFrame.url),
    });
    const h = ipc.handlers.get(requestChannel('getAppInfo'))!;
    expect(await h({ senderFrame: { url: 'https://evil.example/' }, sender: { id: 1 } }, {})).toMatchObject({
      ok: false,
      error: { code: 'untrusted-sender' },
    });
    expect(await h({ senderFrame: { url: trustedUrl }, sender: { id: 1 } }, {})).toMatchObject({
      ok: true,
      result: { shell: 'electron' },
    });
    const around = ipc.handlers.get(requestChannel('journalAround'))!;
    expect(
      await around({ senderFrame: { url: trustedUrl }, sender: { id: 1 } }, { role: 'decode' }),
    ).toMatchObject({
      ok: false,
      error: { code: 'bad-arguments' },
    });
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
