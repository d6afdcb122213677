// Electron composition root: lifecycle, the window, IPC. All behaviour lives in the core.
import { join } from 'node:path';
import { app, BrowserWindow, ipcMain, Notification, powerMonitor } from 'electron';
import { createApp, type App } from './compose';
import { forwardEvents, isTrustedRendererUrl, registerIpc, type IpcEventLike } from './ipc';
import { createMainWindow, installSessionPolicies } from './window';
import { createSafeStorageSecrets } from './secrets';
import { installMenu } from './menu';

const devServerUrl = !app.isPackaged ? process.env['ELECTRON_RENDERER_URL'] : undefined;
const trustedIds = new Set<number>();
let desktop: App | null = null;

app.enableSandbox();

void app.whenReady().then(async () => {
  const dataDir = process.env.PD_CONSOLE_DATA_DIR ?? app.getPath('userData');
  // safeStorage is usable only once the app is ready.
  const secrets = await createSafeStorageSecrets(join(dataDir, 'secrets.json')).catch(() => undefined);
  const d = (desktop = createApp({
    shell: 'electron',
    autoOpenDemo: process.argv.includes('--demo'),
    dataDir,
    secrets,
  }));
  installSessionPolicies(devServerUrl);
  installMenu(d.review, d.core);
  registerIpc(ipcMain, d.handlers, {
    isTrustedSender: (e: IpcEventLike) =>
      trustedIds.has(e.sender.id) && !!e.senderFrame && isTrustedRendererUrl(e.senderFrame.url, devServerUrl),
  });
  // Alerts as desktop notifications (the renderer does the same with the web Notification API in browser mode).
  d.core.on('event', (e) => {
    if (e.kind === 'alert' && Notification.isSupported())
      new Notification({ title: `PD Console: ${e.title}`, body: e.detail ?? '' }).show();
  });
  const open = (): void => {
    const win = createMainWindow(devServerUrl);
    const id = win.webContents.id;
    trustedIds.add(id);
    const stop = forwardEvents(d.core, win.webContents);
    win.on('closed', () => {
      trustedIds.delete(id);
      stop();
    });
  };
  open();
  // After sleep the TCP link is usually dead although nothing said so: reconnect at once.
  powerMonitor.on('resume', () => d.hosts.notifyResume('resumed from sleep'));
  powerMonitor.on('unlock-screen', () => d.hosts.notifyResume('screen unlocked'));
  app.on('activate', () => {
    if (BrowserWindow.getAllWindows().length === 0) open();
  });
});

app.on('window-all-closed', () => {
  if (process.platform !== 'darwin') app.quit();
});

app.on('before-quit', () => {
  void desktop?.shutdown();
});
