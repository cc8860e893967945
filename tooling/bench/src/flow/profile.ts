/**
 * Summarize a V8 `.cpuprofile` (written by `node --cpu-prof`): self time per
 * function and per package, from the sample counts and time deltas.
 */
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Where a script URL lives: a workspace package, a dependency, Node itself, or V8. */
export function ownerOf(url: string): string {
  if (url === '') return '(V8 / native)';
  if (url.startsWith('node:')) return 'node: internals';
  const dep = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (dep) return dep[1] as string;
  const ws = /\/(packages|apps|tooling)\/([^/]+)\//.exec(url);
  if (ws) return `${ws[1]}/${ws[2]}`;
  return url;
}

/**
 * Self time of each function and each owner (see {@link ownerOf}), in
 * milliseconds, largest first.
 */
export function summarize(path: string): {
  totalMs: number;
  functions: { name: string; where: string; ms: number }[];
  owners: { owner: string; ms: number }[];
} {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const fn = new Map<string, { name: string; where: string; ms: number }>();
  const owner = new Map<string, number>();
  let totalMs = 0;
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    const node = byId.get(id);
    if (!node) return;
    totalMs += ms;
    const { functionName, url, lineNumber } = node.callFrame;
    const short = url
      .replace(/^file:\/\//, '')
      .replace(/.*\/node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?/, '');
    const where = url ? `${short.replace(/^\/work\/main\//, '')}:${lineNumber + 1}` : '';
    const key = `${functionName}|${where}`;
    const entry = fn.get(key) ?? { name: functionName || '(anonymous)', where, ms: 0 };
    entry.ms += ms;
    fn.set(key, entry);
    const o = ownerOf(url);
    owner.set(o, (owner.get(o) ?? 0) + ms);
  });
  return {
    totalMs,
    functions: [...fn.values()].sort((a, b) => b.ms - a.ms),
    owners: [...owner.entries()].map(([o, ms]) => ({ owner: o, ms })).sort((a, b) => b.ms - a.ms),
  };
}
