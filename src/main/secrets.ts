// "Remember this passphrase" for the desktop app: values encrypted with Electron safeStorage (the OS
// keychain) and kept, encrypted, in a file in userData. Where safeStorage would only obfuscate (Linux
// without a keyring: backend basic_text) nothing is stored, so the operator is asked again instead of
// leaving a passphrase on disk under a hard-coded key.
import { safeStorage } from 'electron';
import { readFile, rename, writeFile } from 'node:fs/promises';
import type { SecretStore } from './core/ssh/prompts';

export async function createSafeStorageSecrets(file: string): Promise<SecretStore | undefined> {
  if (!(await safeStorage.isAsyncEncryptionAvailable())) return undefined;
  if (process.platform === 'linux' && safeStorage.getSelectedStorageBackend() === 'basic_text')
    return undefined;
  const load = async (): Promise<Record<string, string>> => {
    try {
      return JSON.parse(await readFile(file, 'utf8')) as Record<string, string>;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw new Error(`cannot read the remembered-secrets file ${file}: ${(err as Error).message}`, {
        cause: err,
      });
    }
  };
  const save = async (data: Record<string, string>): Promise<void> => {
    const tmp = `${file}.tmp`;
    await writeFile(tmp, JSON.stringify(data), { mode: 0o600 });
    await rename(tmp, file);
  };
  return {
    async get(key) {
      const v = (await load())[key];
      if (!v) return null;
      const { result } = await safeStorage.decryptStringAsync(Buffer.from(v, 'base64'));
      return result;
    },
    async set(key, value) {
      const data = await load();
      data[key] = (await safeStorage.encryptStringAsync(value)).toString('base64');
      await save(data);
    },
    async delete(key) {
      const data = await load();
      delete data[key];
      await save(data);
    },
  };
}
