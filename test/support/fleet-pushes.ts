// A synthetic push source at the demo fleet's rate and sizes, for what the transport does with pushes (the
// payloads are not read by anything but the serialiser). Measured on the demo fleet (three hosts, a router, two
// prefill and three decode workers) at speed 1, per second: one observation (≈ 9.5 kB of JSON), one dashboard
// push (≈ 8.5 kB), 1.6 signals rows (≈ 9 kB each; two here) — ≈ 32 KiB/s in all.

/** `count` numbers keyed as the fleet's signal keys are (role, worker URL, signal): ≈ 62 bytes of JSON each. */
function values(count: number, second: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (let i = 0; i < count; i++)
    out[`decode/http://127.0.0.${2 + (i % 3)}:300${i % 100}/signal_${i}`] = Math.sin(second + i) / 3 + 0.5;
  return out;
}

/** One simulated second of the demo fleet's pushes: event name and payload, in the order the core emits them. */
export function fleetPushRound(second: number): { event: string; payload: unknown }[] {
  const deploymentId = 'demo-fleet';
  const ts = 1_700_000_000_000 + second * 1000;
  return [
    { event: 'observation', payload: { deploymentId, ts, services: values(150, second) } },
    { event: 'dashboard', payload: { deploymentId, ts, since: ts - 1000, values: values(135, second) } },
    { event: 'signals', payload: { deploymentId, ts, values: values(145, second) } },
    { event: 'signals', payload: { deploymentId, ts: ts + 500, values: values(145, second + 0.5) } },
  ];
}
