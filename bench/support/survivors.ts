// What a process keeps of what it allocates: two heap snapshots some seconds apart, and the objects of the
// second that the first did not hold (V8 numbers objects in the order it first sees them, so an id above the
// first snapshot's highest is newer). Objects a round makes and drops are gone by then (a snapshot collects
// first); what is left was either kept for good or still held when the second snapshot ran — the objects the
// young generation promotes and every major GC then marks. They are grouped by the first object outside the
// new set that holds them (the long-lived structure that keeps them), with the edge it holds them by. The
// report then gives the whole heap by kind of object (what every major GC marks), its strings by holder, and
// each large string with the chain that keeps it (a view of 13+ characters keeps its whole parent string).
import { Session } from 'node:inspector/promises';

/** Node types whose ids come from a hash, not V8's sequence: they say nothing about age. */
function hashedTypes(nodeTypes: string[]): Set<number> {
  return new Set([nodeTypes.indexOf('native'), nodeTypes.indexOf('synthetic')]);
}

type Tally = Map<string, { count: number; bytes: number }>;

function tally(t: Tally, key: string, bytes: number): void {
  const g = t.get(key) ?? { count: 0, bytes: 0 };
  g.count++;
  g.bytes += bytes;
  t.set(key, g);
}

/** The `top` largest entries, one line each. */
function ranked(t: Tally, top: number): string[] {
  return [...t]
    .sort((a, b) => b[1].bytes - a[1].bytes)
    .slice(0, top)
    .map(([k, g]) => `${(g.bytes / 1024).toFixed(1).padStart(9)} kB ${String(g.count).padStart(7)}  ${k}`);
}

interface Snapshot {
  snapshot: {
    meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] };
  };
  nodes: number[];
  edges: number[];
  strings: string[];
}

async function take(session: Session): Promise<Snapshot> {
  const chunks: string[] = [];
  const onChunk = (m: { params: { chunk: string } }): void => void chunks.push(m.params.chunk);
  session.on('HeapProfiler.addHeapSnapshotChunk', onChunk);
  await session.post('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
  session.off('HeapProfiler.addHeapSnapshotChunk', onChunk);
  return JSON.parse(chunks.join('')) as Snapshot;
}

/** Takes a snapshot now; the returned function takes the second and reports the survivors in between. */
export async function startSurvivors(): Promise<(top?: number) => Promise<string>> {
  const session = new Session();
  session.connect();
  const first = await take(session);
  const fields = first.snapshot.meta.node_fields;
  const idAt = fields.indexOf('id');
  const typeAt = fields.indexOf('type');
  const hashed = hashedTypes(first.snapshot.meta.node_types[0]);
  const width = fields.length;
  let maxId = 0;
  for (let i = 0; i < first.nodes.length; i += width)
    if (!hashed.has(first.nodes[i + typeAt])) maxId = Math.max(maxId, first.nodes[i + idAt]);
  return async (top = 40) => {
    const s = await take(session);
    session.disconnect();
    return report(s, maxId, top);
  };
}

function report(s: Snapshot, maxId: number, top: number): string {
  const nf = s.snapshot.meta.node_fields;
  const ef = s.snapshot.meta.edge_fields;
  const nw = nf.length;
  const ew = ef.length;
  const [nType, nName, nId, nSize, nEdges] = ['type', 'name', 'id', 'self_size', 'edge_count'].map((f) =>
    nf.indexOf(f),
  );
  const [eType, eName, eTo] = ['type', 'name_or_index', 'to_node'].map((f) => ef.indexOf(f));
  const nodeTypes = s.snapshot.meta.node_types[0];
  const edgeTypes = s.snapshot.meta.edge_types[0];
  const n = s.nodes.length / nw;
  const label = (i: number): string => {
    const t = nodeTypes[s.nodes[i * nw + nType]];
    const name = s.strings[s.nodes[i * nw + nName]] ?? '';
    return t === 'object' || t === 'closure' ? `${t} ${name.slice(0, 60)}` : t;
  };
  const hashed = hashedTypes(nodeTypes);
  const isNew = (i: number): boolean => !hashed.has(s.nodes[i * nw + nType]) && s.nodes[i * nw + nId] > maxId;
  // First retainer of each node (by the strongest-looking edge: not weak, not a shortcut).
  const retainer = new Int32Array(n).fill(-1);
  const retainEdge = new Int32Array(n).fill(-1);
  let e = 0;
  for (let i = 0; i < n; i++) {
    const count = s.nodes[i * nw + nEdges];
    for (let k = 0; k < count; k++, e += ew) {
      const type = edgeTypes[s.edges[e + eType]];
      if (type === 'weak' || type === 'shortcut') continue;
      const to = s.edges[e + eTo] / nw;
      // An old holder beats a new one: it is what keeps the new objects.
      if (retainer[to] === -1 || (isNew(retainer[to]) && !isNew(i))) {
        retainer[to] = i;
        retainEdge[to] = e;
      }
    }
  }
  const edgeLabel = (at: number): string => {
    const type = edgeTypes[s.edges[at + eType]];
    const v = s.edges[at + eName];
    return type === 'element' || type === 'hidden' ? `[${type}]` : String(s.strings[v]).slice(0, 40);
  };
  /** Up to `hops` holders of node `at`, nearest first: "holder.edge" each. */
  const holders = (at: number, hops: number): string[] => {
    const chain: string[] = [];
    for (let h = at; chain.length < hops && h !== -1 && retainer[h] !== -1; h = retainer[h])
      chain.push(`${label(retainer[h])}.${edgeLabel(retainEdge[h])}`);
    return chain;
  };
  const groups: Tally = new Map();
  let total = 0;
  let count = 0;
  for (let i = 0; i < n; i++) {
    if (!isNew(i)) continue;
    const bytes = s.nodes[i * nw + nSize];
    total += bytes;
    count++;
    // Walk up through new holders to the first old one (bounded: cycles of new objects).
    let at = i;
    let edge = -1;
    for (let hops = 0; hops < 50 && retainer[at] !== -1 && isNew(retainer[at]); hops++) {
      edge = retainEdge[at];
      at = retainer[at];
    }
    const holder = retainer[at];
    // The holder's own holders, for a name: "an Array" says nothing, "an Array in a Map in X.latest" does.
    const key =
      holder === -1
        ? `(no holder) ← ${label(at)}`
        : `${label(holder)} .${edgeLabel(retainEdge[at])} → ${label(at)}${edge !== -1 ? ' …' : ''}  ⟸ ${holders(holder, 4).join(' ⟸ ')}`;
    tally(groups, key, bytes);
  }
  // The whole heap by kind of object, for what every major GC marks.
  const kinds: Tally = new Map();
  let heap = 0;
  for (let i = 0; i < n; i++) {
    if (hashed.has(s.nodes[i * nw + nType])) continue;
    tally(kinds, label(i), s.nodes[i * nw + nSize]);
    heap += s.nodes[i * nw + nSize];
  }
  // Strings by what holds them, two levels up (strings are most of a heap that keeps text).
  const strings: Tally = new Map();
  const stringTypes = new Set(
    ['string', 'concatenated string', 'sliced string'].map((t) => nodeTypes.indexOf(t)),
  );
  for (let i = 0; i < n; i++) {
    if (!stringTypes.has(s.nodes[i * nw + nType])) continue;
    let at = i;
    // Up through strings (a cons string's parts) to the first non-string holder.
    for (
      let hops = 0;
      hops < 20 && retainer[at] !== -1 && stringTypes.has(s.nodes[retainer[at] * nw + nType]);
      hops++
    )
      at = retainer[at];
    const up = holders(at, 2);
    tally(strings, up.length ? up.join(' ← ') : '(none)', s.nodes[i * nw + nSize]);
  }
  // Large strings (scrape texts, command output) and the chain that keeps each alive.
  const big: string[] = [];
  for (let i = 0; i < n && big.length < 40; i++) {
    if (!stringTypes.has(s.nodes[i * nw + nType]) || s.nodes[i * nw + nSize] < 8192) continue;
    big.push(`${(s.nodes[i * nw + nSize] / 1024).toFixed(1).padStart(7)} kB  ${holders(i, 8).join(' ← ')}`);
  }
  return [
    `new objects still held: ${count}, ${(total / 1024).toFixed(0)} kB`,
    ...ranked(groups, top),
    '',
    `the whole heap by kind: ${(heap / 1024).toFixed(0)} kB`,
    ...ranked(kinds, top),
    '',
    'strings by holder',
    ...ranked(strings, 25),
    '',
    'large strings and what keeps them',
    ...big,
  ].join('\n');
}
