import type { Combination } from './combination.js';
import { COLUMNS, type ScenarioId } from './scenarios/types.js';

/** The state of one cell: passed, failed, not applicable, skipped (service unreachable, never under CI), not run. */
export type Cell = 'pass' | 'fail' | 'n/a' | 'skip' | 'missing';

const MARK: Record<Cell, string> = {
  pass: '✓',
  fail: '✗',
  'n/a': 'n/a',
  skip: 'skip',
  missing: '·',
};

/** The results of the matrix: one row per combination, one cell per scenario. */
export class ResultTable {
  readonly #cells = new Map<string, Cell>();
  readonly #failures: string[] = [];
  readonly #seconds = new Map<string, number>();

  constructor(readonly combinations: readonly Combination[]) {}

  set(c: Combination, scenario: ScenarioId, cell: Cell): void {
    this.#cells.set(`${c.label}|${scenario}`, cell);
  }

  get(c: Combination, scenario: ScenarioId): Cell {
    return this.#cells.get(`${c.label}|${scenario}`) ?? 'missing';
  }

  /** Run `scenario` of `c` and record whether it passed; rethrows its failure. */
  async record(c: Combination, scenario: ScenarioId, run: () => Promise<void>): Promise<void> {
    const started = performance.now();
    try {
      await run();
      this.set(c, scenario, 'pass');
    } catch (error) {
      this.set(c, scenario, 'fail');
      this.#failures.push(`${c.label} / ${scenario}: ${String(error).split('\n')[0]}`);
      throw error;
    } finally {
      this.addTime(c, (performance.now() - started) / 1000);
    }
  }

  /** Add `seconds` to the time shown for `c` (its start-up, its scenarios). */
  addTime(c: Combination, seconds: number): void {
    this.#seconds.set(c.label, (this.#seconds.get(c.label) ?? 0) + seconds);
  }

  /** Cells that are red: failed, or not run at all. */
  red(): string[] {
    const red: string[] = [];
    for (const c of this.combinations) {
      for (const col of COLUMNS) {
        const cell = this.get(c, col.id);
        if (cell === 'fail' || cell === 'missing') red.push(`${c.label} / ${col.id}: ${cell}`);
      }
    }
    return red;
  }

  /** The table as text: a legend, a header of scenario codes, one row per combination with its time (start-up and scenarios) in seconds. */
  render(): string {
    const width = Math.max(...this.combinations.map((c) => c.label.length));
    const pad = (s: string, n: number) => s + ' '.repeat(Math.max(0, n - [...s].length));
    const cols = COLUMNS.map((col) => Math.max(col.code.length, 4) + 1);
    const head = `${pad('combination', width)} ${COLUMNS.map((col, i) => pad(col.code, cols[i] as number)).join('')}  time`;
    const rows = this.combinations.map((c) => {
      const cells = COLUMNS.map((col, i) => pad(MARK[this.get(c, col.id)], cols[i] as number)).join(
        '',
      );
      const s = this.#seconds.get(c.label);
      return `${pad(c.label, width)} ${cells}  ${s === undefined ? '' : `${s.toFixed(1)}s`}`;
    });
    const counts = (['pass', 'fail', 'n/a', 'skip', 'missing'] as Cell[])
      .map((cell) => {
        let n = 0;
        for (const c of this.combinations)
          for (const col of COLUMNS) if (this.get(c, col.id) === cell) n++;
        return `${n} ${cell}`;
      })
      .join(', ');
    const legend = COLUMNS.map((col) => `${col.code} = ${col.title}`).join('; ');
    return [
      `MCP test matrix: ${this.combinations.length} combinations × ${COLUMNS.length} scenarios (${counts})`,
      legend,
      '',
      head,
      ...rows,
      ...(this.#failures.length ? ['', 'failures:', ...this.#failures.map((f) => `  ${f}`)] : []),
    ].join('\n');
  }
}
