// Electron composition root: lifecycle, the window, IPC. All behaviour lives in the core.
import { app, BrowserWindow, ipcMain, powerMonitor } from 'electron';
import { createApp } from './compose';
import { forwardEvents, isTrustedRendererUrl, registerIpc, type IpcEventLike } from './ipc';
import { createMainWindow, installSessionPolicies } from './window';

const devServerUrl = !app.isPackaged ? process.env['ELECTRON_RENDERER_URL'] : undefined;
const desktop = createApp({
  shell: 'electron',
  autoOpenDemo: process.argv.includes('--demo'),
  dataDir: process.env.PD_CONSOLE_DATA_DIR ?? app.getPath('userData'),
});
const core = desktop.core;
const trustedIds = new Set<number>();

app.enableSandbox();

void app.whenReady().then(() => {
  installSessionPolicies(devServerUrl);
  registerIpc(ipcMain, desktop.handlers, {
    isTrustedSender: (e: IpcEventLike) =>
      trustedIds.has(e.sender.id) && !!e.senderFrame && isTrustedRendererUrl(e.senderFrame.url, devServerUrl),
  });
  const open = (): void => {
    const win = createMainWindow(devServerUrl);
    const id = win.webContents.id;
    trustedIds.add(id);
    const stop = forwardEvents(core, win.webContents);
    win.on('closed', () => {
      trustedIds.delete(id);
      stop();
    });
  };
  open();
  // After sleep the TCP link is usually dead although nothing said so: reconnect at once.
  powerMonitor.on('resume', () => core.onResume());
  app.on('activate', () => {
    if (BrowserWindow.getAllWindows().length === 0) open();
  });
});

app.on('window-all-closed', () => {
  if (process.platform !== 'darwin') app.quit();
});

app.on('before-quit', () => {
  void desktop.shutdown();
});
