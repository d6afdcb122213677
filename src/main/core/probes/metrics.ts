// Scraping one /metrics endpoint through the SSH tunnel and turning every way it can go wrong into a
// per-endpoint state that names what was received and what to change.
import type http from 'node:http';
import type { Exposition } from './exposition/types';
import { ExpositionParseError } from './exposition/types';
import { ACCEPT_HEADER, formatFromContentType, parseExposition, type SeriesCache } from './exposition/parser';
import { HttpError, httpGet } from '../ssh/http-agent';

export type ScrapeResult =
  | { ok: true; exposition: Exposition; durationMs: number; bytes: number }
  | { ok: false; error: string; hint?: string; disabled?: boolean };

export interface ScrapeTarget {
  url: string;
  /** Named in messages: "decode (sglang-decode.service)". */
  what: string;
  unit: string;
  kind: 'server' | 'router';
}

export async function scrapeMetrics(
  agent: http.Agent,
  target: ScrapeTarget,
  opts: {
    timeoutMs?: number;
    maxBytes?: number;
    /** The target's series cache, when the caller scrapes it again and again (see ParseOptions.cache). */
    cache?: SeriesCache;
  } = {},
): Promise<ScrapeResult> {
  let res;
  try {
    res = await httpGet(agent, target.url, {
      timeoutMs: opts.timeoutMs ?? 5000,
      maxBytes: opts.maxBytes ?? 16 * 1024 * 1024,
      // prometheus_client (SGLang's /metrics) gzips when asked: a 50 kB prefill scrape crosses the SSH link as
      // 3 kB, every second, for every worker. The router's exporter ignores it and answers plain.
      headers: { accept: ACCEPT_HEADER, 'accept-encoding': 'gzip' },
    });
  } catch (err) {
    const e = err as Error;
    if (err instanceof HttpError && err.code === 'refused')
      return {
        ok: false,
        error: `${target.what}: nothing is listening at ${target.url} (connection refused)`,
        hint: `Is ${target.unit} running? If it is, check the port in its ExecStart.`,
      };
    return { ok: false, error: `${target.what}: ${e.message}` };
  }
  if (res.status === 404) {
    return target.kind === 'server'
      ? {
          ok: false,
          disabled: true,
          error: `${target.what}: ${target.url} answered 404 — metrics are disabled on this server`,
          hint: `Add --enable-metrics to ExecStart of ${target.unit}, then restart it.`,
        }
      : {
          ok: false,
          error: `${target.what}: ${target.url} answered 404`,
          hint: `Check --prometheus-host/--prometheus-port in ExecStart of ${target.unit}.`,
        };
  }
  if (res.status !== 200)
    return {
      ok: false,
      error: `${target.what}: ${target.url} answered HTTP ${res.status}${describeBody(res.body)}`,
    };
  const ctype = String(res.headers['content-type'] ?? '');
  // Only the start of the body is looked at here, and decoded only when it could open a page: the parser reads
  // the bytes, so a scrape (every second) never builds its text.
  const head = /text\/html/i.test(ctype) || mayOpenPage(res.bytes) ? headText(res.bytes) : '';
  if (/text\/html/i.test(ctype) || /^\s*<(!doctype|html)/i.test(head))
    return {
      ok: false,
      error: `${target.what}: ${target.url} returned an HTML page${describeBody(head)} instead of Prometheus metrics`,
      hint: 'Something else (a proxy or another app) answers on that port; check the port in ExecStart.',
    };
  const format = formatFromContentType(ctype);
  try {
    // Monitoring should not drop a whole scrape over OpenMetrics' value rules (e.g. a negative _sum, which
    // Prometheus' own scraper accepts too); structure is still checked exactly.
    // The bytes, not the decoded body: only they show invalid UTF-8, which would otherwise merge series.
    const exposition = parseExposition(res.bytes, format, {
      openMetricsValueRules: 'skip',
      cache: opts.cache,
    });
    return { ok: true, exposition, durationMs: res.durationMs, bytes: res.bytes.length };
  } catch (err) {
    if (err instanceof ExpositionParseError)
      return {
        ok: false,
        error: `${target.what}: ${target.url} returned text that is not valid ${format} exposition (${err.message})`,
      };
    throw err;
  }
}

/** Enough of a body to recognise an HTML page and find its <title>. */
const HEAD_BYTES = 64 * 1024;

const headText = (bytes: Buffer): string => bytes.subarray(0, HEAD_BYTES).toString('utf8');

/**
 * Whether /^\s*</ could match the decoded head: after ASCII whitespace the next byte is '<', or a non-ASCII byte
 * (\s also takes Unicode spaces and the BOM, so those are decoded and tested as before). A metrics text starts
 * with '#' or a name, and is told apart without decoding it.
 */
function mayOpenPage(bytes: Buffer): boolean {
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (b === 0x20 || (b >= 0x09 && b <= 0x0d)) continue;
    return b === 0x3c || b >= 0x80;
  }
  return false;
}

function describeBody(body: string): string {
  const title = /<title>([^<]{1,80})<\/title>/i.exec(body)?.[1];
  if (title) return ` ("${title.trim()}")`;
  const first = body.trim().split('\n')[0]?.slice(0, 80);
  return first ? `: ${JSON.stringify(first)}` : '';
}
