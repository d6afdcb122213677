// The app's hosts file: the SSH hosts the operator added (an alias from ~/.ssh/config, or host/port/user/key).
// JSON validated with zod on every load. A file that does not parse or validate is reported with its path and
// line:column and is never overwritten or reset — the operator's list is theirs to fix. Writes are atomic
// (temp file, fsync, rename) and serialized, and keys this version does not know are preserved.
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { HostConfig } from '@shared/domain';
import { ApiError } from '../api-error';
import { findSyntaxError, locatePath, positionAt } from './json-location';

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
    label: z.string().trim().min(1, 'label must not be empty').max(200),
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

export class HostStoreError extends ApiError {
  constructor(
    code: string,
    message: string,
    hint: string | undefined,
    readonly file: string,
    readonly line?: number,
    readonly column?: number,
  ) {
    super(code, message, hint);
    this.name = 'HostStoreError';
  }
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
    let text: string;
    try {
      const st = await fs.stat(this.file);
      if (st.size > MAX_FILE_BYTES)
        throw new HostStoreError(
          'config',
          `${this.file} is ${st.size} bytes; a hosts file over ${MAX_FILE_BYTES} bytes is refused`,
          'Check that the path points at the PD Console hosts file.',
          this.file,
        );
      text = await fs.readFile(this.file, 'utf8');
    } catch (err) {
      if (err instanceof HostStoreError) throw err;
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { version: HOSTS_FILE_VERSION, hosts: [] };
      throw new HostStoreError(
        'config',
        `cannot read hosts file ${this.file}: ${(err as Error).message}`,
        'Fix the file permissions; PD Console will not replace a file it cannot read.',
        this.file,
      );
    }
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      const found = findSyntaxError(text);
      const pos = positionAt(text, found?.offset ?? 0);
      throw new HostStoreError(
        'config',
        `${this.file}:${pos.line}:${pos.column}: not valid JSON (${found?.message ?? (err as Error).message})`,
        'Fix the file by hand (or restore a backup); PD Console does not overwrite a hosts file it cannot read.',
        this.file,
        pos.line,
        pos.column,
      );
    }
    const r = fileSchema.safeParse(json);
    if (!r.success) {
      const issue = r.error.issues[0];
      const pos = locatePath(text, issue.path);
      const where = issue.path.length ? `${formatPath(issue.path)}: ` : '';
      throw new HostStoreError(
        'config',
        `${this.file}:${pos.line}:${pos.column}: ${where}${issue.message}`,
        'Fix or remove that entry; PD Console does not overwrite a hosts file it cannot read.',
        this.file,
        pos.line,
        pos.column,
      );
    }
    if (r.data.version > HOSTS_FILE_VERSION)
      throw new HostStoreError(
        'config',
        `${this.file} was written by a newer PD Console (format version ${r.data.version}; this one reads ${HOSTS_FILE_VERSION})`,
        'Update PD Console; this version leaves the file untouched.',
        this.file,
      );
    const ids = new Set<string>();
    for (let i = 0; i < r.data.hosts.length; i++) {
      const id = r.data.hosts[i].id;
      if (ids.has(id)) {
        const pos = locatePath(text, ['hosts', i, 'id']);
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
    return r.data;
  }

  private async write(data: FileData): Promise<void> {
    const dir = path.dirname(this.file);
    await fs.mkdir(dir, { recursive: true, mode: 0o700 });
    const tmp = path.join(
      dir,
      `.${path.basename(this.file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`,
    );
    const body = JSON.stringify({ ...data, version: HOSTS_FILE_VERSION }, null, 2) + '\n';
    const fh = await fs.open(tmp, 'w', 0o600);
    try {
      await fh.writeFile(body, 'utf8');
      await fh.sync();
    } finally {
      await fh.close();
    }
    try {
      await fs.rename(tmp, this.file);
    } catch (err) {
      await fs.rm(tmp, { force: true });
      throw err;
    }
    if (process.platform !== 'win32') {
      // Make the rename itself durable: without this a crash can bring back the old file.
      const d = await fs.open(dir, 'r');
      try {
        await d.sync();
      } finally {
        await d.close();
      }
    }
  }
}

function copyHost(h: HostConfig): HostConfig {
  return { ...h };
}

function formatPath(p: ReadonlyArray<PropertyKey>): string {
  return p.map((k, i) => (typeof k === 'number' ? `[${k}]` : i === 0 ? String(k) : `.${String(k)}`)).join('');
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
