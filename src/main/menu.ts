// The desktop app's menu: the platform's usual menus plus File → Open Recording…, which opens a recorded
// session for review through the same core path the sessions list uses, and shows it in the focused window.
import { BrowserWindow, Menu, dialog, type MenuItemConstructorOptions } from 'electron';
import type { ReviewService } from './core/services/review';
import type { Core } from './core/core';

export function installMenu(review: ReviewService, core: Core): void {
  const openRecording = async (): Promise<void> => {
    const win = BrowserWindow.getFocusedWindow() ?? BrowserWindow.getAllWindows()[0];
    const options = {
      title: 'Open a PD Console recording',
      properties: ['openFile' as const],
      filters: [
        { name: 'PD Console recordings', extensions: ['gz'] },
        { name: 'All files', extensions: ['*'] },
      ],
    };
    const picked = win ? await dialog.showOpenDialog(win, options) : await dialog.showOpenDialog(options);
    const path = picked.filePaths[0];
    if (picked.canceled || !path) return;
    try {
      // Every window shows it (the renderer listens for reviewOpened).
      core.emit('reviewOpened', await review.openFile(path));
    } catch (err) {
      const e = err as Error & { hint?: string };
      dialog.showErrorBox('Cannot open the recording', `${e.message}${e.hint ? `\n\n${e.hint}` : ''}`);
    }
  };
  const isMac = process.platform === 'darwin';
  const template: MenuItemConstructorOptions[] = [
    ...(isMac ? [{ role: 'appMenu' as const }] : []),
    {
      label: 'File',
      submenu: [
        {
          label: 'Open Recording…',
          accelerator: 'CmdOrCtrl+O',
          click: () => void openRecording(),
        },
        { type: 'separator' },
        isMac ? { role: 'close' } : { role: 'quit' },
      ],
    },
    { role: 'editMenu' },
    { role: 'viewMenu' },
    { role: 'windowMenu' },
  ];
  Menu.setApplicationMenu(Menu.buildFromTemplate(template));
}
