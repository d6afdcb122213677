// Real-looking scrapes of a known era with families no supported era lists appended: an E4 decode server
// (test/sglang/fixtures/decode-newest.prom, held to the E4 inventory) plus two hypothetical future sglang:
// families and prometheus_client's python_* / process_* collectors; an smg router (router-smg.prom) plus one
// future smg_ family. Parsed by the production parser.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseExposition } from '../../src/main/core/probes/exposition/parser';
import type { Exposition } from '../../src/main/core/probes/exposition/types';

const read = (...p: string[]): string => readFileSync(join(__dirname, '..', ...p), 'utf8');

export const FUTURE_SERVER_UNKNOWN = ['sglang:kv_offload_bytes_total', 'sglang:spec_decode_accept_length'];
export const FUTURE_ROUTER_UNKNOWN = ['smg_worker_kv_pressure'];

export function futureServerText(): string {
  return (
    read('sglang', 'fixtures', 'decode-newest.prom') +
    read('signals', 'fixtures', 'future-server-families.prom')
  );
}

export function futureRouterText(): string {
  return (
    read('sglang', 'fixtures', 'router-smg.prom') + read('signals', 'fixtures', 'future-router-families.prom')
  );
}

export function futureServerScrape(): Exposition {
  return parseExposition(futureServerText(), 'prometheus');
}

export function futureRouterScrape(): Exposition {
  return parseExposition(futureRouterText(), 'prometheus');
}
