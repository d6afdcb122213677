// Saved hosts and the operator's side of SSH: the questions the SSH layer asks (unknown host key, key
// passphrase, password) go out as `sshPrompt` events and come back through `answerSshPrompt`. Secrets in
// answers are handed to the resolver and forgotten here; they are never logged or recorded.
import { randomUUID } from 'node:crypto';
import type { HostsRequests, SshPromptEvent, SshPromptKind } from '@shared/api/hosts';
import type { DeploymentSummary, HostConfig } from '@shared/domain';
import type { ServiceHost } from './service-host';
import { HostStore } from '../config/hosts-store';
import type { SshPrompts } from '../ssh/prompts';
import { NetworkWatcher } from '../ssh/network-watcher';
import { ApiError } from '../api-error';

/** Same as the resolver's default prompt timeout. */
const PROMPT_TIMEOUT_MS = 5 * 60_000;

interface Pending {
  kind: SshPromptKind;
  resolve: (answer: { accept?: boolean; secret?: string | null; remember?: boolean }) => void;
}

/** What the hosts service is given: prompt pushes, the open deployments, and the links' wake-up call. */
export interface HostsServiceHost extends Pick<ServiceHost, 'emit'> {
  /** The deployments the core watches (a host with one open is not removed). */
  listDeployments(args: Record<string, never>): Promise<DeploymentSummary[]>;
  /** The machine woke up or the network changed: every link reconnects now. */
  onResume(reason: string): void;
}

export class HostsService {
  readonly store: HostStore;
  private readonly pending = new Map<string, Pending>();
  private watcher: NetworkWatcher | null = null;

  constructor(
    private readonly core: HostsServiceHost,
    hostsFile: string,
  ) {
    this.store = new HostStore(hostsFile);
  }

  /** Prompts that ask whoever is looking at the app (every connected window/tab gets the event). */
  readonly prompts: SshPrompts = {
    hostKey: async (info) => (await this.ask('hostKey', info.label, { ...info })).accept === true,
    passphrase: async (info) => {
      const a = await this.ask('passphrase', info.label, { ...info });
      if (typeof a.secret !== 'string') return null;
      return info.canRemember && a.remember ? { passphrase: a.secret, remember: true } : a.secret;
    },
    password: async (info) => {
      const a = await this.ask('password', info.label, { ...info });
      return typeof a.secret === 'string' ? a.secret : null;
    },
  };

  handlers(): HostsRequests {
    return {
      listHosts: async () => {
        try {
          return { file: this.store.file, hosts: await this.store.list() };
        } catch (err) {
          // A broken hosts file is reported with its path and line, never silently reset.
          const e = err as ApiError;
          return { file: this.store.file, hosts: [], error: { message: e.message, hint: e.hint } };
        }
      },
      addHost: (a) => this.store.add(a.host),
      updateHost: (a) => this.store.update(a.id, a.patch),
      removeHost: async (a) => {
        const open = (await this.core.listDeployments({})).some((d) => d.host.id === a.id);
        if (open) throw new ApiError('host-open', `host ${a.id} is connected`, 'Close its deployment first.');
        await this.store.remove(a.id);
      },
      answerSshPrompt: async (a) => {
        const p = this.pending.get(a.promptId);
        if (!p) throw new ApiError('prompt-gone', 'that question was already answered or timed out');
        this.pending.delete(a.promptId);
        p.resolve({ accept: a.accept, secret: a.secret, remember: a.remember });
        this.core.emit('sshPromptClosed', { promptId: a.promptId });
      },
    };
  }

  /** Reconnects every open deployment at once after sleep or a network change (not ones failed on credentials). */
  watchNetwork(): void {
    if (this.watcher) return;
    this.watcher = new NetworkWatcher();
    this.watcher.on('change', (c) => this.core.onResume(c.reason));
    this.watcher.start();
  }

  /** For shells with their own signal (Electron powerMonitor 'resume'). */
  notifyResume(reason: string): void {
    if (this.watcher) this.watcher.notify('resume', reason);
    else this.core.onResume(reason);
  }

  stop(): void {
    this.watcher?.stop();
    this.watcher = null;
    for (const [id, p] of this.pending) {
      p.resolve({ accept: false, secret: null });
      this.core.emit('sshPromptClosed', { promptId: id });
    }
    this.pending.clear();
  }

  hostById(id: string): Promise<HostConfig | undefined> {
    return this.store.get(id);
  }

  private ask(
    kind: SshPromptKind,
    label: string,
    info: Record<string, unknown>,
  ): Promise<{ accept?: boolean; secret?: string | null; remember?: boolean }> {
    const promptId = randomUUID();
    return new Promise((resolve) => {
      // The resolver gives up after its own prompt timeout; close the dialog then too, as a refusal.
      const timer = setTimeout(() => {
        if (!this.pending.delete(promptId)) return;
        resolve({ accept: false, secret: null });
        this.core.emit('sshPromptClosed', { promptId });
      }, PROMPT_TIMEOUT_MS);
      timer.unref?.();
      this.pending.set(promptId, {
        kind,
        resolve: (a) => {
          clearTimeout(timer);
          resolve(a);
        },
      });
      const ev: SshPromptEvent = { promptId, kind, label, info };
      this.core.emit('sshPrompt', ev);
    });
  }
}
