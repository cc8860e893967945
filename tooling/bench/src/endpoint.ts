/**
 * Where the server CPU of one gated flow goes, measured in process (no
 * sockets, no load generator), so the HTTP table of `flow.ts` can be split:
 *
 * - endpoint, canned tool: `@mrtr/server` parsing, validating and answering
 *   both rounds, the tool returning fixed results of the same shapes;
 * - endpoint + gate: the benchmark's real tool (`servers/ours-endpoint.ts`);
 * - gate alone: `ConfirmationGate.run` for both rounds, called directly.
 *
 * The endpoint rows call `McpEndpoint.serve` with an exchange shaped like
 * `@mrtr/node`'s direct path (headers read from a plain object, the body
 * handed over as text), as the HTTP server runs it; one more row calls the
 * web-standard endpoint with requests shaped like `@hono/node-server`'s
 * lightweight request (real `Headers`, `arrayBuffer()` from a buffer) and
 * its lightweight `Response`: the converted path. Figures are CPU
 * microseconds per flow (round 1 + round 2), medians of alternating slices;
 * the script prints them and asserts nothing.
 *
 * Run: `npx -y pnpm@12.4.2 --filter @mrtr/bench endpoint` (after a build).
 */
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { getRequestListener } from '@hono/node-server';
import { aeadReady } from '@mrtr/ticket';
import { HEADERS, ROUND1, requestStateOf, round2, seedRecords } from './flow/common.js';
import { directFlow, gateFlow } from './flow/in-process.js';
import { printTable } from './measure.js';
import { oursEndpoint } from './servers/ours-endpoint.js';

// Tickets move to libsodium once its WebAssembly has compiled, which needs the event loop; the
// loops below only await microtasks, so without this they would measure the OpenSSL fallback.
await aeadReady;

// Installs @hono/node-server's lightweight Request/Response globals, as toNodeHandler does.
getRequestListener(() => new Response(null));

const headers = new Headers({ ...HEADERS, host: '127.0.0.1:3000', 'content-length': '512' });
const encoder = new TextEncoder();
function request(body: string): Request {
  const bytes = encoder.encode(body);
  return {
    method: 'POST',
    url: 'http://127.0.0.1:3000/mcp',
    headers,
    arrayBuffer: async () => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length),
    get signal() {
      return new AbortController().signal;
    },
  } as unknown as Request;
}
/** The body of a lightweight Response, without turning it into a real one. */
function bodyOf(response: Response): string {
  const key = Object.getOwnPropertySymbols(response).find((s) => s.description === 'cache');
  const cached = key ? (response as unknown as Record<symbol, unknown[]>)[key] : undefined;
  if (typeof cached?.[1] !== 'string') throw new Error('not a cached JSON response');
  return cached[1];
}

function endpointFlow(canned: boolean): () => Promise<void> {
  const endpoint = oursEndpoint(seedRecords(), { canned });
  return async () => {
    const state = requestStateOf(bodyOf(await endpoint(request(ROUND1))));
    if (!state) throw new Error('round 1 did not ask');
    const done = bodyOf(await endpoint(request(round2(state))));
    if (!done.includes('"complete"') || done.includes('"isError":true'))
      throw new Error(`round 2 did not complete: ${done}`);
  };
}

/** CPU microseconds per call of `fn` over one slice of `ms` milliseconds. */
async function slice(fn: () => Promise<void>, ms: number): Promise<number> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let n = 0;
  while (performance.now() - t0 < ms) {
    await fn();
    n++;
  }
  const used = process.cpuUsage(cpu0);
  return (used.user + used.system) / n;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

const cases: [string, () => Promise<void>][] = [
  ['endpoint, canned tool (no gate)', directFlow(true)],
  ['endpoint + gate (the benchmark tool)', directFlow(false)],
  ['gate alone (ConfirmationGate.run, both rounds)', gateFlow()],
  ['endpoint + gate, web Request/Response (converted path)', endpointFlow(false)],
];
for (const [, fn] of cases) await slice(fn, 1000); // warm up
const ROUNDS = 9;
const SLICE_MS = 300;
const samples: number[][] = cases.map(() => []);
for (let r = 0; r < ROUNDS; r++)
  for (let i = 0; i < cases.length; i++)
    samples[i]?.push(await slice((cases[i] as [string, () => Promise<void>])[1], SLICE_MS));

console.log(
  `Node ${process.version}; CPU µs per flow (round 1 + round 2) in process, medians of ${ROUNDS} alternating slices of ${SLICE_MS} ms.\n`,
);
printTable(
  ['what runs', 'CPU µs per flow', 'flows per CPU second'],
  cases.map(([name], i) => {
    const us = median(samples[i] as number[]);
    return [name, us, Math.round(1e6 / us)];
  }),
);
/**
 * The garbage collector's work for `flows` flows of `fn`: scavenges and
 * mark-compacts (count, pause ms). A scavenge is cheap when what a request
 * built is dead by then; when something keeps it reachable, or V8 promotes
 * it, every scavenge copies it and mark-compacts follow (docs/benchmarks.md,
 * "Garbage").
 */
async function garbage(fn: () => Promise<void>, flows: number) {
  const seen = { minor: 0, minorMs: 0, major: 0, majorMs: 0 };
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as unknown as { detail?: { kind?: number } }).detail?.kind;
      if (kind === constants.NODE_PERFORMANCE_GC_MINOR) {
        seen.minor++;
        seen.minorMs += entry.duration;
      } else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
        seen.major++;
        seen.majorMs += entry.duration;
      }
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  for (let i = 0; i < flows; i++) await fn();
  await new Promise((resolve) => setTimeout(resolve, 50)); // entries arrive after the fact
  observer.disconnect();
  return seen;
}

const GC_FLOWS = 20_000;
const rows: (string | number)[][] = [];
for (const [name, fn] of cases) {
  const g = await garbage(fn, GC_FLOWS);
  const per = (x: number) => ((x * 1000) / GC_FLOWS).toFixed(2);
  rows.push([name, per(g.minor), per(g.minorMs), per(g.major), per(g.majorMs)]);
}
console.log(
  `\nGarbage collection over ${GC_FLOWS.toLocaleString('en')} flows of each, per 1,000 flows:\n`,
);
printTable(['what runs', 'scavenges', 'scavenge ms', 'mark-compacts', 'mark-compact ms'], rows);

console.log(
  '\nEvery flow claims a fresh nonce, so the replay store grows as it would in a server (entries live until the\n' +
    "ticket's expiry + 1 s + three times the most clock skew a sealer allows, 300 s); part of each figure is the garbage collector's work\n" +
    'on that heap.',
);
