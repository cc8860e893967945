/**
 * The matrix: notes-server × 4 adapters, service-deleter and file-deleter
 * × 3 adapters each (no SDK entry point) × 4 replay stores, each combination two
 * server instances, every scenario of its app one test. Combinations run one
 * after another; the table is printed at the end, and any red cell (failed,
 * or never run) fails the run. Under CI=true an unreachable PostgreSQL or
 * Redis fails the run instead of skipping its combinations.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  COLUMNS,
  COMBINATIONS,
  postgresReachable,
  ResultTable,
  type RunningCombination,
  redisReachable,
  scenariosOf,
  startCombination,
} from '../src/index.js';

const reachable = { postgres: await postgresReachable(), redis: await redisReachable() };
const run = `${process.pid}_${Date.now().toString(36)}`;
const table = new ResultTable(COMBINATIONS);

afterAll(() => {
  console.log(`\n${table.render()}\n`);
  expect(table.red()).toEqual([]);
});

for (const c of COMBINATIONS) {
  const unavailable =
    (c.store === 'postgres' && !reachable.postgres) || (c.store === 'redis' && !reachable.redis);
  const scenarios = scenariosOf(c.app);
  expect(scenarios.map((s) => s.id)).toEqual(COLUMNS.map((col) => col.id));

  describe(c.label, () => {
    let running: RunningCombination | undefined;
    beforeAll(async () => {
      if (unavailable) return;
      const started = performance.now();
      running = await startCombination(c, run);
      table.addTime(c, (performance.now() - started) / 1000);
    });
    afterAll(async () => {
      await running?.close();
    });

    for (const scenario of scenarios) {
      const title = COLUMNS.find((col) => col.id === scenario.id)?.title ?? scenario.id;
      // A scenario that does not apply to this app (its reason is in scenario.na) is a cell of
      // the printed table, not a test: there is nothing to run.
      if (scenario.na !== undefined) {
        table.set(c, scenario.id, 'n/a');
        continue;
      }
      if (unavailable) table.set(c, scenario.id, 'skip');
      const go = scenario.run;
      // Skipped only outside CI when the store's service does not answer; under CI=true the
      // probe has already failed the run instead.
      it.skipIf(unavailable)(`${title}${unavailable ? ` (${c.store} unreachable)` : ''}`, () =>
        table.record(c, scenario.id, async () => {
          if (!running) throw new Error(`${c.label} did not start`);
          await go(running);
        }),
      );
    }
  });
}
