// Exposes the API contract as window.api ({ invoke, on }) and nothing else. Runs sandboxed: no Node, no
// dependencies beyond the contract's plain lists (bundled in). The glue itself is in bridge.ts.
import { contextBridge, ipcRenderer } from 'electron';
import { exposeApi } from './bridge';

exposeApi(contextBridge, ipcRenderer);
