// The ssh2 authHandler: "none" to learn the server's methods, then agent identities, key files,
// keyboard-interactive and password — each only when the server lists its method — asking the operator only
// for the last two. It records what it
// offered, so a refusal can say exactly which keys the server rejected.
import type {
  AnyAuthMethod,
  AuthHandlerMiddleware,
  BaseAgent,
  KeyboardInteractiveCallback,
  Prompt,
} from 'ssh2';
import type { IdentityKey } from './key-files';
import { askWithin, type SshPrompts } from './prompts';

export interface AuthPlan {
  label: string;
  user: string;
  host: string;
  port: number;
  agent: { agent: BaseAgent | string; where: string; keyCount: number } | null;
  keys: IdentityKey[];
  keyboardInteractive: boolean;
  password: boolean;
  prompts: SshPrompts;
  promptTimeoutMs: number;
}

export interface AuthReport {
  /** Human descriptions of what was offered, in order. */
  offered: string[];
  /** The operator cancelled a password / keyboard-interactive prompt. */
  cancelled: boolean;
  /** The server's remaining methods the last time it refused (null before the first refusal). */
  serverMethods: string[] | null;
}

type Method = 'publickey' | 'keyboard-interactive' | 'password';
type Step = { method: Method; describe: string; make: () => Promise<AnyAuthMethod | null> };

export function createAuthHandler(plan: AuthPlan, report: AuthReport): AuthHandlerMiddleware {
  const steps: Step[] = [];
  const username = plan.user;
  if (plan.agent) {
    const a = plan.agent;
    steps.push({
      method: 'publickey',
      describe: `ssh-agent (${a.where}, ${a.keyCount} key${a.keyCount === 1 ? '' : 's'})`,
      make: async () => ({ type: 'agent', username, agent: a.agent }),
    });
  }
  for (const k of plan.keys)
    steps.push({
      method: 'publickey',
      describe: `key ${k.file} (${k.fingerprint})`,
      make: async () => ({ type: 'publickey', username, key: k.key }),
    });
  if (plan.keyboardInteractive)
    steps.push({
      method: 'keyboard-interactive',
      describe: 'keyboard-interactive',
      make: async () => ({ type: 'keyboard-interactive', username, prompt: keyboardPrompt(plan, report) }),
    });
  if (plan.password)
    steps.push({
      method: 'password',
      describe: 'password',
      make: async () => {
        const password = await askWithin(`password for ${username}@${plan.host}`, plan.promptTimeoutMs, () =>
          plan.prompts.password({
            label: plan.label,
            user: username,
            host: plan.host,
            port: plan.port,
            kind: 'password',
            prompt: `Password for ${username}@${plan.host}:`,
            echo: false,
          }),
        );
        if (password === null) {
          report.cancelled = true;
          return null;
        }
        return { type: 'password', username, password };
      },
    });

  let probed = false;
  return (methodsLeft, _partial, next) => {
    if (methodsLeft) report.serverMethods = [...methodsLeft];
    // Like OpenSSH, ask with "none" first: the refusal lists the methods the server allows, so we never offer
    // (or prompt for) one it would refuse anyway. sshd does not count this first "none" against MaxAuthTries.
    if (!probed && !methodsLeft) {
      probed = true;
      return next({ type: 'none', username });
    }
    // ssh2 accepts `false` for "no more methods"; its typings only list method names.
    const giveUp = next as unknown as (v: false) => void;
    const advance = (): void => {
      const step = steps.shift();
      if (!step) return giveUp(false);
      if (methodsLeft && !methodsLeft.includes(step.method)) return advance();
      step
        .make()
        .then((m) => {
          if (!m) return advance();
          report.offered.push(step.describe);
          next(m);
        })
        .catch((err: unknown) => {
          // A prompt that failed or timed out ends this method, not the whole attempt.
          report.offered.push(`${step.describe} (not answered: ${(err as Error).message})`);
          report.cancelled = true;
          advance();
        });
    };
    advance();
  };
}

function keyboardPrompt(
  plan: AuthPlan,
  report: AuthReport,
): (
  name: string,
  instructions: string,
  lang: string,
  prompts: Prompt[],
  finish: KeyboardInteractiveCallback,
) => void {
  return (name, instructions, _lang, prompts, finish) => {
    const answers: string[] = [];
    const askNext = async (): Promise<void> => {
      for (const p of prompts) {
        const a = await askWithin(`"${p.prompt.trim()}" from ${plan.host}`, plan.promptTimeoutMs, () =>
          plan.prompts.password({
            label: plan.label,
            user: plan.user,
            host: plan.host,
            port: plan.port,
            kind: 'keyboard-interactive',
            prompt: p.prompt,
            echo: p.echo === true,
            name: name || undefined,
            instructions: instructions || undefined,
          }),
        );
        if (a === null) {
          report.cancelled = true;
          finish([]);
          return;
        }
        answers.push(a);
      }
      finish(answers);
    };
    askNext().catch((err: unknown) => {
      report.offered.push(`keyboard-interactive (not answered: ${(err as Error).message})`);
      report.cancelled = true;
      finish([]);
    });
  };
}
