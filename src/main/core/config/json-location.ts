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

/** The position a JSON.parse SyntaxError points at, from its message. */
export function syntaxErrorPosition(text: string, err: SyntaxError): TextPosition {
  const lc = /line (\d+) column (\d+)/.exec(err.message);
  if (lc) return { line: Number(lc[1]), column: Number(lc[2]) };
  const pos = /position (\d+)/.exec(err.message);
  if (pos) return positionAt(text, Number(pos[1]));
  // "Unexpected end of JSON input": the problem is where the text stops.
  return positionAt(text, text.length);
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
