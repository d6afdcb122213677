// Just enough of bash for the command strings an SSH client sends: quoting (via shell-quote), lists joined
// by `;`, `&&`, `||`, leading VAR=value assignments, `$?`, and the redirections people append to silence, merge
// or close streams (`2>/dev/null`, `>/dev/null`, `2>&1`, `>&2`, `</dev/null`). Pipelines and other redirections
// are refused clearly.
import { parse, type ParseEntry } from 'shell-quote';

export interface SimpleCommand {
  argv: string[];
  env: Record<string, string>;
  discardStdout: boolean;
  discardStderr: boolean;
  stderrToStdout: boolean;
  stdoutToStderr: boolean;
  /** `</dev/null`: the command reads nothing of the shell's own stdin. */
  stdinClosed: boolean;
}

export interface ListItem {
  /** How this command is joined to the previous one. */
  join: ';' | '&&' | '||';
  cmd: SimpleCommand;
}

export type ShellParse = { ok: true; items: ListItem[] } | { ok: false; message: string; exitCode: number };

/** Where the quotes of a command line are unbalanced, bash refuses it before running anything. */
function unbalancedQuote(line: string): string | null {
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote === "'") {
      if (c === "'") quote = null;
    } else if (quote === '"') {
      if (c === '\\') i++;
      else if (c === '"') quote = null;
    } else if (c === '\\') i++;
    else if (c === "'" || c === '"') quote = c;
  }
  return quote;
}

/**
 * Stands for `$?` in parsed words until the command runs: its value is the status of the command before it,
 * which in a list (`a; echo $?`) is only known after parsing.
 */
export const LAST_STATUS = '\u0000?\u0000';

/** Every demo user's login shell (/etc/passwd), which sshd exports as $SHELL. */
const LOGIN_SHELL = '/bin/bash';

export function parseShell(line: string): ShellParse {
  const q = unbalancedQuote(line);
  if (q) {
    return {
      ok: false,
      exitCode: 2,
      message: `bash: -c: line 1: unexpected EOF while looking for matching \`${q}'\n`,
    };
  }
  // Variables stay literal but $? and the login shell sshd puts in $SHELL: the demo host has no other
  // environment worth expanding, and a literal is visible.
  const tokens: ParseEntry[] = parse(line, (key) =>
    key === '?'
      ? LAST_STATUS
      : /^SHELL(:[-=].*)?$/.test(key)
        ? LOGIN_SHELL
        : key === 'SHELL##*/'
          ? LOGIN_SHELL.slice(LOGIN_SHELL.lastIndexOf('/') + 1)
          : `$${key}`,
  );
  const items: ListItem[] = [];
  let join: ListItem['join'] = ';';
  let cur: SimpleCommand = fresh();
  const flush = (): void => {
    if (cur.argv.length) items.push({ join, cmd: cur });
    cur = fresh();
  };
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (typeof t === 'string') {
      const next = tokens[i + 1];
      if (
        (t === '1' || t === '2') &&
        next &&
        typeof next === 'object' &&
        'op' in next &&
        line.includes(`${t}>`)
      ) {
        const r = redirect(cur, Number(t), next.op, tokens[i + 2]);
        if (r) return r;
        i += 2;
        continue;
      }
      if (!cur.argv.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(t)) {
        const eq = t.indexOf('=');
        cur.env[t.slice(0, eq)] = t.slice(eq + 1);
        continue;
      }
      cur.argv.push(t);
      continue;
    }
    if ('comment' in t) break;
    if (t.op === 'glob') {
      // No file on this host matches the demo's patterns: bash passes the word through unchanged.
      cur.argv.push(t.pattern);
      continue;
    }
    if (t.op === ';' || t.op === '&&' || t.op === '||') {
      if (!cur.argv.length) return syntaxError(t.op);
      flush();
      join = t.op;
      continue;
    }
    if (t.op === '<') {
      const target = tokens[i + 1];
      if (target !== '/dev/null') return unsupported(`<${typeof target === 'string' ? target : ''}`);
      cur.stdinClosed = true;
      i += 1;
      continue;
    }
    if (t.op === '>' || t.op === '>>' || t.op === '>&') {
      const r = redirect(cur, 1, t.op, tokens[i + 1]);
      if (r) return r;
      i += 1;
      continue;
    }
    return {
      ok: false,
      exitCode: 2,
      message: `bash: the demo host runs single commands joined by ;, && or ||; \`${t.op}' is not supported\n`,
    };
  }
  flush();
  return { ok: true, items };
}

function fresh(): SimpleCommand {
  return {
    argv: [],
    env: {},
    discardStdout: false,
    discardStderr: false,
    stderrToStdout: false,
    stdoutToStderr: false,
    stdinClosed: false,
  };
}

function syntaxError(op: string): ShellParse {
  return {
    ok: false,
    exitCode: 2,
    message: `bash: -c: line 1: syntax error near unexpected token \`${op}'\n`,
  };
}

function redirect(
  cur: SimpleCommand,
  fd: number,
  op: string,
  target: ParseEntry | undefined,
): ShellParse | null {
  if (typeof target !== 'string') return syntaxError('newline');
  if (op === '>&') {
    if (fd === 2 && target === '1') cur.stderrToStdout = true;
    else if (fd === 1 && target === '2') cur.stdoutToStderr = true;
    else return unsupported(`${fd}>&${target}`);
    return null;
  }
  if (target !== '/dev/null') return unsupported(`${fd}${op}${target}`);
  if (fd === 1) cur.discardStdout = true;
  else cur.discardStderr = true;
  return null;
}

function unsupported(what: string): ShellParse {
  return {
    ok: false,
    exitCode: 1,
    message: `bash: ${what}: the demo host's file system is read-only; only /dev/null and 2>&1 redirections are supported\n`,
  };
}
