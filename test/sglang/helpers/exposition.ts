// Test helper: turns the small Prometheus-text fixtures of these tests into the Exposition model.
// It covers only what the fixtures use (HELP/TYPE, comments, quoted labels with \" \\ \n escapes, values).
// The real parser lives in src/main/core/probes/exposition/parser.ts and is tested on its own; this keeps the
// SGLang mapping tests independent of it.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type {
  Exposition,
  MetricFamily,
  MetricType,
  Sample,
} from '../../../src/main/core/probes/exposition/types';

const SUFFIXES = ['_bucket', '_sum', '_count', '_total', '_created', '_gcount', '_gsum'];

export function expo(text: string): Exposition {
  const families: MetricFamily[] = [];
  const declared = new Map<string, MetricFamily>();
  let sampleCount = 0;
  const lines = text.split('\n');
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (line === '') return;
    const typeMatch = /^#\s*TYPE\s+(\S+)\s+(\S+)/.exec(line);
    if (typeMatch) {
      const fam: MetricFamily = { name: typeMatch[1], type: typeMatch[2] as MetricType, samples: [] };
      declared.set(fam.name, fam);
      families.push(fam);
      return;
    }
    if (line.startsWith('#')) return;
    const sample = parseSample(line, i + 1);
    let fam = declared.get(sample.name);
    if (!fam) {
      const suffix = SUFFIXES.find((s) => sample.name.endsWith(s));
      if (suffix) fam = declared.get(sample.name.slice(0, -suffix.length));
    }
    if (!fam) {
      fam = { name: sample.name, type: 'untyped', samples: [] };
      declared.set(fam.name, fam);
      families.push(fam);
    }
    fam.samples.push(sample);
    sampleCount++;
  });
  return { format: 'prometheus', families, sampleCount };
}

function parseSample(line: string, lineNo: number): Sample {
  const nameMatch = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
  if (!nameMatch) throw new Error(`fixture line ${lineNo}: no metric name in ${JSON.stringify(line)}`);
  const name = nameMatch[0];
  let rest = line.slice(name.length);
  const labels: Record<string, string> = {};
  if (rest.startsWith('{')) {
    let j = 1;
    while (rest[j] !== '}') {
      const m = /^\s*,?\s*([a-zA-Z_][a-zA-Z0-9_]*)="/.exec(rest.slice(j));
      if (!m) {
        if (/^\s*,?\s*}/.test(rest.slice(j))) {
          j = rest.indexOf('}', j);
          break;
        }
        throw new Error(`fixture line ${lineNo}: bad label set in ${JSON.stringify(line)}`);
      }
      j += m[0].length;
      let value = '';
      while (rest[j] !== '"') {
        if (j >= rest.length) throw new Error(`fixture line ${lineNo}: unterminated label value`);
        if (rest[j] === '\\') {
          const next = rest[j + 1];
          value += next === 'n' ? '\n' : next;
          j += 2;
        } else value += rest[j++];
      }
      labels[m[1]] = value;
      j++;
    }
    rest = rest.slice(j + 1);
  }
  const parts = rest.trim().split(/\s+/);
  const value = parseValue(parts[0], lineNo);
  return { name, labels, value, ...(parts[1] ? { timestampMs: Number(parts[1]) } : {}) };
}

function parseValue(v: string | undefined, lineNo: number): number {
  if (v === '+Inf' || v === 'Inf') return Infinity;
  if (v === '-Inf') return -Infinity;
  if (v === 'NaN') return NaN;
  const n = v === undefined || v === '' ? NaN : Number(v);
  if (Number.isNaN(n)) throw new Error(`fixture line ${lineNo}: bad value ${JSON.stringify(v)}`);
  return n;
}

/** Parses test/sglang/fixtures/<name>. */
export function fixture(name: string): Exposition {
  return expo(readFileSync(join(__dirname, '..', 'fixtures', name), 'utf8'));
}
