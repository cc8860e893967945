/**
 * Shared measuring helpers for the benchmark scripts: run a function for a
 * fixed time several times and report the median rate.
 */

/**
 * Operations per second of `fn`, median over `runs` runs of `ms` milliseconds each.
 * `concurrency` (default 1) calls run at once, each starting the next call when it
 * ends; the rate counts all of them.
 */
export async function opsPerSecond(
  fn: () => unknown | Promise<unknown>,
  options: { runs?: number; ms?: number; warmupMs?: number; concurrency?: number } = {},
): Promise<{ median: number; samples: number[] }> {
  const runs = options.runs ?? 5;
  const ms = options.ms ?? 1000;
  const lanes = options.concurrency ?? 1;
  const loop = async (end: number) => {
    let count = 0;
    while (performance.now() < end) {
      await fn();
      count++;
    }
    return count;
  };
  const parallel = async (end: number) =>
    (await Promise.all(Array.from({ length: lanes }, () => loop(end)))).reduce((a, b) => a + b, 0);
  await parallel(performance.now() + (options.warmupMs ?? 300));
  const samples: number[] = [];
  for (let r = 0; r < runs; r++) {
    const start = performance.now();
    const count = await parallel(start + ms);
    samples.push((count * 1000) / (performance.now() - start));
  }
  const sorted = [...samples].sort((a, b) => a - b);
  return { median: sorted[Math.floor(sorted.length / 2)] as number, samples };
}

/** Print rows as an aligned Markdown table. */
export function printTable(headers: string[], rows: (string | number)[][]): void {
  const cells = [
    headers,
    ...rows.map((r) => r.map((c) => (typeof c === 'number' ? format(c) : c))),
  ];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => String(r[i] ?? '').length)));
  const line = (r: (string | number)[]) =>
    `| ${r.map((c, i) => String(c).padEnd(widths[i] as number)).join(' | ')} |`;
  console.log(line(cells[0] as string[]));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of cells.slice(1)) console.log(line(r));
}

function format(n: number): string {
  if (Number.isInteger(n)) return n.toLocaleString('en-US');
  return n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(2);
}
