// The main window with Electron's security checklist applied: isolated, sandboxed, no Node in the page,
// a strict CSP, no navigation away from the app, no new windows, every permission request denied.
import { BrowserWindow, session, shell, type WebContents } from 'electron';
import { join } from 'node:path';

/** External links we are willing to hand to the OS browser. */
const EXTERNAL_ALLOW = [/^https:\/\/github\.com\/sgl-project\//, /^https:\/\/docs\.sglang\.ai\//];

export const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; " +
  "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'";

export function createMainWindow(devServerUrl: string | undefined): BrowserWindow {
  const win = new BrowserWindow({
    width: 1440,
    height: 900,
    minWidth: 1024,
    minHeight: 640,
    show: false,
    title: 'PD Console',
    webPreferences: {
      preload: join(__dirname, '../preload/index.js'),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      experimentalFeatures: false,
      webviewTag: false,
      spellcheck: false,
      // Middle-click opens links in new windows, bypassing will-navigate.
      disableBlinkFeatures: 'Auxclick',
    },
  });
  harden(win.webContents, devServerUrl);
  win.once('ready-to-show', () => win.show());
  if (devServerUrl) void win.loadURL(devServerUrl);
  else void win.loadFile(join(__dirname, '../renderer/index.html'));
  return win;
}

export function installSessionPolicies(devServerUrl: string | undefined): void {
  const ses = session.defaultSession;
  ses.setPermissionRequestHandler((_wc, _permission, callback) => callback(false));
  ses.setPermissionCheckHandler(() => false);
  ses.webRequest.onHeadersReceived((details, callback) => {
    // The dev server's hot reload needs inline scripts and a websocket; packaged builds never get this.
    const csp = devServerUrl
      ? CSP.replace("script-src 'self'", "script-src 'self' 'unsafe-inline'").replace(
          "connect-src 'self'",
          "connect-src 'self' ws:",
        )
      : CSP;
    callback({ responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [csp] } });
  });
}

function harden(contents: WebContents, devServerUrl: string | undefined): void {
  contents.on('will-navigate', (event, url) => {
    const allowed = devServerUrl && new URL(url).origin === new URL(devServerUrl).origin;
    if (!allowed) event.preventDefault();
  });
  contents.on('will-attach-webview', (event) => event.preventDefault());
  contents.setWindowOpenHandler(({ url }) => {
    if (EXTERNAL_ALLOW.some((re) => re.test(url))) void shell.openExternal(url);
    return { action: 'deny' };
  });
}
