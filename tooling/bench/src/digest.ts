/**
 * RFC 8785 canonicalization: `@mrtr/digest`'s own `canonicalize` against the
 * `canonicalize` npm package, on the same inputs in the same run; and the
 * whole digest, `digestJson`, against `canonicalize` + `node:crypto` SHA-256
 * on the service deleter's `delete_service` arguments and a 10 KB argument object among others.
 *
 * The package follows `JSON.stringify` for values JSON cannot carry (drops
 * `undefined` members, calls `toJSON`, writes a `Map` as `{}`), so using it
 * in `@mrtr/digest` would need a rejecting pass in front of it; that pair is
 * measured too ("package + guard"). Outputs are compared before timing.
 *
 * Run: `npx -y pnpm@12.4.2 --filter @mrtr/bench digest` (after a build).
 */
import { createHash } from 'node:crypto';
import { canonicalize, DIGEST_DOMAIN, digestJson } from '@mrtr/digest';
import canonicalizePackage from 'canonicalize';
import { printTable } from './measure.js';

/** mulberry32: seeded, so every run measures the same inputs. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const rand = prng(8785);
const words = ['api-prod', 'svc_8f21c', 'Meeting notes', 'é€😀', 'a"b\\c', 'line\nbreak', 'x'];
const pick = () => words[Math.floor(rand() * words.length)] as string;

const workloads: [string, unknown][] = [
  // The arguments of the service deleter's delete_service call: what the gate digests on every round.
  ['delete_service args', { serviceId: 'svc_8f21c', name: 'api-prod' }],
  [
    'nested object (~1 KB)',
    {
      workspaceUri: 'notes://team',
      title: 'Meeting notes',
      filters: { tags: ['a', 'b', 'c'], archived: false, limit: 25 },
      items: Array.from({ length: 12 }, (_, i) => ({
        id: `note-${i}`,
        title: pick(),
        size: Math.floor(rand() * 1e6),
        labels: [pick(), pick()],
      })),
    },
  ],
  [
    '10 KB argument object',
    {
      workspaceUri: 'notes://team',
      notes: Array.from({ length: 64 }, (_, i) => ({
        id: `note-${String(i).padStart(4, '0')}`,
        title: `${pick()} ${i}`,
        body: `${pick()} ${pick()} ${pick()} ${pick()} ${pick()}`,
        tags: [pick(), pick(), pick()],
        size: Math.floor(rand() * 1e6),
        pinned: rand() < 0.5,
      })),
    },
  ],
  ['200 doubles', Array.from({ length: 200 }, () => (rand() - 0.5) * 10 ** (rand() * 40 - 20))],
  [
    '50 unicode strings',
    Object.fromEntries(
      Array.from({ length: 50 }, (_, i) => [`${pick()}${i}`, `${pick()} ${pick()}`]),
    ),
  ],
];

// String.prototype.isWellFormed is in Node 20; the shared bench tsconfig stops at ES2023 types.
const wellFormed = (s: string) => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

/** The rejecting pass the package would need in front of it to meet `@mrtr/digest`'s contract. */
function guard(value: unknown, depth = 0): void {
  switch (typeof value) {
    case 'string':
      if (!wellFormed(value)) throw new Error('lone surrogate');
      return;
    case 'number':
      if (!Number.isFinite(value)) throw new Error('non-finite');
      return;
    case 'boolean':
      return;
    case 'object':
      break;
    default:
      throw new Error(typeof value);
  }
  if (value === null) return;
  if (depth >= 1000) throw new Error('too deep');
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) guard(value[i], depth + 1);
    return;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) throw new Error('unsupported object');
  for (const key of Object.keys(value)) {
    if (!wellFormed(key)) throw new Error('lone surrogate');
    guard((value as Record<string, unknown>)[key], depth + 1);
  }
}

const candidates: [string, (v: unknown) => unknown][] = [
  ['@mrtr/digest canonicalize', canonicalize],
  ['canonicalize 5.1.0 (package)', canonicalizePackage],
  [
    'package + guard',
    (v) => {
      guard(v);
      return canonicalizePackage(v);
    },
  ],
];

/** Operations per CPU second of this process over one slice; steadier than wall time on a shared machine. */
function slice(fn: () => unknown, ms: number): number {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let n = 0;
  while (performance.now() - t0 < ms) {
    fn();
    n++;
  }
  const used = process.cpuUsage(cpu0);
  return (n * 1e6) / (used.user + used.system);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

const ROUNDS = 9;
const SLICE_MS = 150;
const rows: (string | number)[][] = [];
for (const [name, value] of workloads) {
  const ours = canonicalize(value);
  if (canonicalizePackage(value) !== ours) throw new Error(`outputs differ on ${name}`);
  const fns = [
    ...candidates.map(
      ([, fn]) =>
        () =>
          fn(value),
    ),
    () => digestJson(value),
    // The baseline digest: the package's canonical text, SHA-256 in OpenSSL, same domain prefix.
    () =>
      `sha256:${createHash('sha256')
        .update(DIGEST_DOMAIN)
        .update(canonicalizePackage(value) as string)
        .digest('base64url')}`,
  ];
  for (const fn of fns) slice(fn, 100); // warm up
  // Alternate the candidates round by round so that machine load hits all alike.
  const rates: number[][] = fns.map(() => []);
  for (let r = 0; r < ROUNDS; r++) {
    for (let i = 0; i < fns.length; i++) rates[i]?.push(slice(fns[i] as () => unknown, SLICE_MS));
  }
  const [mine, pkg, guarded, digest, nodeDigest] = rates as number[][] as [
    number[],
    number[],
    number[],
    number[],
    number[],
  ];
  const ratio = (other: number[], base = mine) =>
    `${median(base.map((m, i) => m / (other[i] as number))).toFixed(2)}×`;
  rows.push([
    name,
    `${new TextEncoder().encode(ours).length} B`,
    median(mine),
    median(pkg),
    median(guarded),
    ratio(pkg),
    ratio(guarded),
    median(digest),
    median(nodeDigest),
    ratio(nodeDigest, digest),
  ]);
}

console.log(
  `Node ${process.version}; operations per CPU second, medians of ${ROUNDS} alternating rounds of ${SLICE_MS} ms;`,
);
console.log(
  'ratios are medians of per-round ratios. Outputs identical on every workload (checked first).\n',
);
printTable(
  [
    'input',
    'canonical size',
    'ours',
    'package',
    'package + guard',
    'ours / package',
    'ours / package+guard',
    'digestJson',
    'package + node:crypto SHA-256',
    'digestJson / that',
  ],
  rows,
);
