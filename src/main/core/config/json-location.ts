// Line/column positions in JSON text, so a config error can say "hosts.json:14:15" instead of only a JSON path.
// JSON.parse reports syntax errors by character offset (Node 20) or line/column (Node 22+); valid JSON that fails
// schema validation is located by walking the text to the value at a path.

export interface TextPosition {
  line: number;
  column: number;
}

export function positionAt(text: string, offset: number): TextPosition {
  const clamped = Math.max(0, Math.min(offset, text.length));
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < clamped; i++)
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  return { line, column: clamped - lineStart + 1 };
}

/**
 * Where and why JSON text is invalid, found by a strict RFC 8259 scan. JSON.parse's messages differ between Node
 * versions and some (Node 20: "Unexpected token ']', ...") carry no position at all; or null when valid.
 */
export function findSyntaxError(text: string): { offset: number; message: string } | null {
  let i = 0;
  const fail = (message: string): never => {
    throw Object.assign(new Error(message), { offset: i });
  };
  const ws = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text[i])) i++;
  };
  const describe = (): string => (i >= text.length ? 'end of file' : `"${text[i]}"`);
  const expect = (ch: string, what: string): void => {
    ws();
    if (text[i] !== ch) fail(`expected ${what}, found ${describe()}`);
    i++;
  };
  const string = (): void => {
    i++;
    while (i < text.length && text[i] !== '"') {
      const c = text.charCodeAt(i);
      if (c < 0x20) fail('control character in a string (use \\n, \\t…)');
      if (text[i] === '\\') {
        i++;
        if (text[i] === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) fail('bad \\u escape');
          i += 5;
          continue;
        }
        if (!'"\\/bfnrt'.includes(text[i] ?? '')) fail('bad escape in a string');
      }
      i++;
    }
    if (i >= text.length) fail('unterminated string');
    i++;
  };
  const value = (depth: number): void => {
    if (depth > 512) fail('nested too deeply');
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') return void i++;
      for (;;) {
        ws();
        if (text[i] !== '"') fail(`expected a property name in double quotes, found ${describe()}`);
        string();
        expect(':', '":"');
        value(depth + 1);
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') return void i++;
        fail(`expected "," or "}", found ${describe()}`);
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') return void i++;
      for (;;) {
        value(depth + 1);
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') return void i++;
        fail(`expected "," or "]", found ${describe()}`);
      }
    }
    if (c === '"') return string();
    const m = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i, i + 400));
    if (!m) fail(`unexpected ${describe()}`);
    i += m![0].length;
  };
  try {
    value(0);
    ws();
    if (i < text.length) fail(`unexpected ${describe()} after the end of the document`);
    return null;
  } catch (err) {
    const e = err as Error & { offset?: number };
    if (e.offset === undefined) throw err;
    return { offset: e.offset, message: e.message };
  }
}

/**
 * Offset of the value at `path` (object keys and array indexes) in valid JSON text, or of the deepest existing
 * ancestor when the path does not exist (a missing required key points at its object).
 */
export function locatePath(text: string, path: ReadonlyArray<PropertyKey>): TextPosition {
  let i = 0;
  const ws = (): void => {
    while (i < text.length && /\s/.test(text[i])) i++;
  };
  const skipString = (): string => {
    const start = i;
    i++;
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const skipValue = (): void => {
    ws();
    const c = text[i];
    if (c === '"') return void skipString();
    if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      i++;
      ws();
      if (text[i] === close) return void i++;
      for (;;) {
        if (c === '{') {
          ws();
          skipString();
          ws();
          i++; // ':'
        }
        skipValue();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        i++; // close
        return;
      }
    }
    while (i < text.length && !/[\s,\]}]/.test(text[i])) i++;
  };

  ws();
  for (const key of path) {
    const here = i;
    const c = text[i];
    if (c === '{' && typeof key === 'string') {
      i++;
      let found = false;
      ws();
      while (i < text.length && text[i] !== '}') {
        ws();
        const k = skipString();
        ws();
        i++; // ':'
        ws();
        if (k === key) {
          found = true;
          break;
        }
        skipValue();
        ws();
        if (text[i] === ',') i++;
        ws();
      }
      if (!found) return positionAt(text, here);
    } else if (c === '[' && typeof key === 'number') {
      i++;
      ws();
      for (let n = 0; n < key; n++) {
        if (text[i] === ']') return positionAt(text, here);
        skipValue();
        ws();
        if (text[i] === ',') i++;
        ws();
      }
      if (text[i] === ']') return positionAt(text, here);
    } else return positionAt(text, here);
  }
  return positionAt(text, i);
}
