// Public entry of the exposition parser: Prometheus text 0.0.4 and OpenMetrics 1.0, chosen by the
// Content-Type the endpoint answered with. The dialect rules are documented in docs/parser.md.

import { parseOpenMetrics } from './openmetrics';
import { parsePrometheusText } from './prometheus-text';
import type { SeriesCache } from './series-cache';
import type { Exposition, ExpositionFormat } from './types';
import { decodeExposition, type InvalidUtf8 } from './utf8';

export { SeriesCache } from './series-cache';
export { ExpositionParseError } from './types';
export type { Exemplar, Exposition, ExpositionFormat, MetricFamily, MetricType, Sample } from './types';

/**
 * What Prometheus itself sends: OpenMetrics 1.0 first, then the 0.0.4 text format. UTF-8 name escaping is
 * not offered because quoted metric names are not supported.
 */
export const ACCEPT_HEADER =
  'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,' +
  'text/plain;version=0.0.4;q=0.5,*/*;q=0.1';

export interface ParseOptions {
  /**
   * OpenMetrics only. 'enforce' (default) applies every rule of the OpenMetrics 1.0 suite, including its value
   * rules: counter-like samples (_total, _sum, _count, _bucket, _gcount) neither NaN nor negative, no negative
   * summary quantile values, no _sum on a histogram with negative buckets. 'skip' drops those value rules, as
   * Prometheus' own OpenMetrics parser does; client_golang emits such values when observations are negative
   * (Prometheus' alltypes.5mfs.om.txt is an example), and a console should still show them.
   */
  openMetricsValueRules?: 'enforce' | 'skip';
  /**
   * The series cache of the target this exposition came from, owned by whoever scrapes that target again and
   * again (one per endpoint poller): its later parses then skip label parsing for series they saw before.
   * Leave it out for a one-off parse. It never changes the result.
   */
  cache?: SeriesCache;
}

/**
 * Parses a whole exposition. Pure: the result depends only on the text, format and rules (a cache in
 * `options` changes how fast it comes, never what it is). Throws ExpositionParseError
 * (1-based line and column, and what was expected) on the first violation of the format.
 *
 * Pass the bytes of a response as they came: only bytes show where the input is not UTF-8 (a lossy decode
 * turns such bytes into U+FFFD, so different label values would become one series), and the parser then
 * rejects them where Prometheus does. A string is read as it is.
 */
export function parseExposition(
  input: string | Uint8Array,
  format: ExpositionFormat,
  options: ParseOptions = {},
): Exposition {
  if (format !== 'openmetrics' && format !== 'prometheus') {
    throw new TypeError(
      `unknown exposition format ${JSON.stringify(format)}; expected "prometheus" or "openmetrics"`,
    );
  }
  let text: string;
  let invalidUtf8: InvalidUtf8 | undefined;
  if (typeof input === 'string') {
    text = input;
  } else {
    ({ text, invalid: invalidUtf8 } = decodeExposition(input));
  }
  if (format === 'openmetrics') {
    return parseOpenMetrics(
      text,
      { valueRules: options.openMetricsValueRules !== 'skip' },
      invalidUtf8,
      options.cache,
    );
  }
  return parsePrometheusText(text, invalidUtf8, options.cache);
}

/**
 * The format an endpoint used, from its Content-Type header: application/openmetrics-text is OpenMetrics;
 * text/plain (version 0.0.4), a missing header and anything else are read as the Prometheus text format,
 * which is what Prometheus falls back to as well.
 */
export function formatFromContentType(contentType: string | undefined): ExpositionFormat {
  if (contentType === undefined) return 'prometheus';
  const semicolon = contentType.indexOf(';');
  const mediaType = (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
  return mediaType === 'application/openmetrics-text' ? 'openmetrics' : 'prometheus';
}
