// Electron composition root: lifecycle, the window, IPC. All behaviour lives in the core.
import { join } from 'node:path';
import { app, BrowserWindow, ipcMain, Notification, powerMonitor } from 'electron';
import { createApp, type App } from './compose';
import { forwardEvents, isTrustedRendererUrl, registerIpc, type IpcEventLike } from './ipc';
import { createMainWindow, installSessionPolicies } from './window';
import { createSafeStorageSecrets } from './secrets';
import { installMenu } from './menu';
import { tuneGarbageCollector } from './gc-tuning';
import { worthNotifying } from '@shared/alert-notice';

const devServerUrl = !app.isPackaged ? process.env['ELECTRON_RENDERER_URL'] : undefined;
const trustedIds = new Set<number>();
let desktop: App | null = null;

app.enableSandbox();
// Before the core allocates: the main process is where it runs (see gc-tuning.ts).
tuneGarbageCollector();

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
    if (worthNotifying(e) && Notification.isSupported())
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

// Quitting waits for the shutdown (recordings closed cleanly, SSH links ended), but never for long: a stuck
// disposer must not keep the app from quitting, and a recording left open is still readable up to its last flush.
const SHUTDOWN_DEADLINE_MS = 5000;
let quitting = false;
app.on('before-quit', (e) => {
  const d = desktop;
  if (!d || quitting) return;
  quitting = true;
  e.preventDefault();
  const deadline = new Promise<'deadline'>((r) => setTimeout(() => r('deadline'), SHUTDOWN_DEADLINE_MS));
  void Promise.race([d.shutdown().then(() => 'done' as const), deadline])
    .then((how) => {
      if (how === 'deadline')
        console.error(`PD Console: shutdown took over ${SHUTDOWN_DEADLINE_MS} ms; quitting anyway`);
    })
    .catch((err: unknown) => console.error('PD Console: shutdown failed:', err))
    .finally(() => app.exit(0));
});
