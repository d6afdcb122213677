// The app's hosts file: the SSH hosts the operator added (an alias from ~/.ssh/config, or host/port/user/key).
// JSON validated with zod on every load. A file that does not parse or validate is reported with its path and
// line:column and is never overwritten or reset — the operator's list is theirs to fix. Writes are atomic
// (temp file, fsync, rename) and serialized, and keys this version does not know are preserved.
import { z } from 'zod';
import type { HostConfig } from '@shared/domain';
import { isPlainLine, PLAIN_LINE_MESSAGE } from '@shared/display-text';
import { ConfigFileError, readJsonFile, validateJson, writeFileAtomic, type ErrorFactory } from './json-file';
import { locatePath } from './json-location';

export const HOSTS_FILE_VERSION = 1;
const MAX_FILE_BYTES = 4 * 1024 * 1024;
const MAX_HOSTS = 1000;

// Values end up as ssh arguments and in ~/.ssh/config lookups: no whitespace, quotes, or a leading dash.
const NAME = /^[^\s'"\\-][^\s'"\\]{0,254}$/;

const hostSchema = z
  .object({
    id: z
      .string()
      .regex(/^[A-Za-z0-9._-]{1,64}$/, 'id must be 1-64 letters, digits, dots, dashes or underscores'),
    label: z
      .string()
      .trim()
      .min(1, 'label must not be empty')
      .max(200)
      .refine(isPlainLine, `label ${PLAIN_LINE_MESSAGE}`),
    kind: z.enum(['ssh', 'demo']),
    alias: z
      .string()
      .regex(NAME, 'alias must be a Host name from ~/.ssh/config (no spaces or quotes)')
      .optional(),
    hostname: z
      .string()
      .regex(NAME, 'hostname must be a host name or IP address (no spaces or quotes)')
      .optional(),
    port: z.number().int().min(1).max(65535).optional(),
    user: z
      .string()
      .regex(/^[^\s'"\\:@/-][^\s'"\\:@/]{0,63}$/, 'user must be a login name (no spaces, quotes, @ or :)')
      .optional(),
    identityFile: z
      .string()
      .min(1)
      .max(4096)
      .refine((s) => !s.includes('\0'), 'identityFile must not contain NUL')
      .optional(),
  })
  .strict()
  .refine((h) => h.kind !== 'ssh' || h.alias !== undefined || h.hostname !== undefined, {
    message: 'an ssh host needs an alias or a hostname',
  });

const fileSchema = z.looseObject({
  version: z.number().int().min(1),
  hosts: z.array(hostSchema).max(MAX_HOSTS),
});

export type HostInput = Omit<HostConfig, 'id'> & { id?: string };
export type HostPatch = Partial<Omit<HostConfig, 'id'>>;

export class HostStoreError extends ConfigFileError {
  override name = 'HostStoreError';
}

type FileData = z.infer<typeof fileSchema>;

export class HostStore {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(readonly file: string) {}

  list(): Promise<HostConfig[]> {
    return this.serialized(async () => (await this.read()).hosts.map(copyHost));
  }

  get(id: string): Promise<HostConfig | undefined> {
    return this.serialized(async () => {
      const h = (await this.read()).hosts.find((x) => x.id === id);
      return h ? copyHost(h) : undefined;
    });
  }

  add(input: HostInput): Promise<HostConfig> {
    return this.serialized(async () => {
      const data = await this.read();
      const id = input.id ?? newId(input.label, data.hosts);
      if (data.hosts.some((h) => h.id === id))
        throw new HostStoreError(
          'conflict',
          `a host with id "${id}" already exists in ${this.file}`,
          undefined,
          this.file,
        );
      const host = this.validateHost({ ...input, id });
      data.hosts.push(host);
      await this.write(data);
      return copyHost(host);
    });
  }

  update(id: string, patch: HostPatch): Promise<HostConfig> {
    return this.serialized(async () => {
      const data = await this.read();
      const i = data.hosts.findIndex((h) => h.id === id);
      if (i < 0)
        throw new HostStoreError(
          'not-found',
          `no host with id "${id}" in ${this.file}`,
          undefined,
          this.file,
        );
      const merged: Record<string, unknown> = { ...data.hosts[i], ...patch, id };
      // An explicit undefined in the patch clears the field (e.g. switching from hostname to alias).
      for (const [k, v] of Object.entries(patch)) if (v === undefined) delete merged[k];
      const host = this.validateHost(merged);
      data.hosts[i] = host;
      await this.write(data);
      return copyHost(host);
    });
  }

  remove(id: string): Promise<void> {
    return this.serialized(async () => {
      const data = await this.read();
      const next = data.hosts.filter((h) => h.id !== id);
      if (next.length === data.hosts.length)
        throw new HostStoreError(
          'not-found',
          `no host with id "${id}" in ${this.file}`,
          undefined,
          this.file,
        );
      data.hosts = next;
      await this.write(data);
    });
  }

  private serialized<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined); // the caller gets the error; the queue only orders operations
    return run;
  }

  private validateHost(value: unknown): HostConfig {
    const r = hostSchema.safeParse(value);
    if (r.success) return r.data;
    const issue = r.error.issues[0];
    const field = issue.path.length ? `${issue.path.join('.')}: ` : '';
    throw new HostStoreError(
      'invalid-argument',
      `invalid host: ${field}${issue.message}`,
      undefined,
      this.file,
    );
  }

  private async read(): Promise<FileData> {
    const src = await readJsonFile(this.file, {
      what: 'hosts file',
      maxBytes: MAX_FILE_BYTES,
      fixHint:
        'Fix the file by hand (or restore a backup); PD Console does not overwrite a hosts file it cannot read.',
      error: this.error,
    });
    if (!src) return { version: HOSTS_FILE_VERSION, hosts: [] };
    const data = validateJson(
      this.file,
      src,
      fileSchema,
      'Fix or remove that entry; PD Console does not overwrite a hosts file it cannot read.',
      this.error,
    );
    if (data.version > HOSTS_FILE_VERSION)
      throw new HostStoreError(
        'config',
        `${this.file} was written by a newer PD Console (format version ${data.version}; this one reads ${HOSTS_FILE_VERSION})`,
        'Update PD Console; this version leaves the file untouched.',
        this.file,
      );
    const ids = new Set<string>();
    for (let i = 0; i < data.hosts.length; i++) {
      const id = data.hosts[i].id;
      if (ids.has(id)) {
        const pos = locatePath(src.text, ['hosts', i, 'id']);
        throw new HostStoreError(
          'config',
          `${this.file}:${pos.line}:${pos.column}: hosts[${i}].id "${id}" is used by an earlier host too`,
          'Give each host its own id.',
          this.file,
          pos.line,
          pos.column,
        );
      }
      ids.add(id);
    }
    return data;
  }

  private readonly error: ErrorFactory = (code, message, hint, line, column) =>
    new HostStoreError(code, message, hint, this.file, line, column);

  private write(data: FileData): Promise<void> {
    return writeFileAtomic(
      this.file,
      JSON.stringify({ ...data, version: HOSTS_FILE_VERSION }, null, 2) + '\n',
    );
  }
}

function copyHost(h: HostConfig): HostConfig {
  return { ...h };
}

function newId(label: string, existing: ReadonlyArray<{ id: string }>): string {
  const base =
    label
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 40) || 'host';
  let id = base;
  for (let n = 2; existing.some((h) => h.id === id); n++) id = `${base}-${n}`;
  return id;
}
