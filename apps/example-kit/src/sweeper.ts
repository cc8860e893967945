import { sqlTableName } from '@mrtr/sql';
import type { Database } from './db.js';

/** One table an example server keeps bounded: `run` deletes its expired rows and says how many. */
export interface Sweep {
  /** The table swept (`name` or `schema.name`), vacuumed on PGlite after rows went. */
  table: string;
  run(): Promise<number>;
}

/** A running sweeper. */
export interface Sweeper {
  /** Run every sweep once now (the timer does the same); resolves when they are done. */
  runOnce(): Promise<void>;
  /** Stop the timer; resolves once a run in progress finished. */
  stop(): Promise<void>;
}

/**
 * Run `sweeps` once at start and then every `everyMs` milliseconds, until
 * `stop()`. A failed sweep is reported on stderr and tried again next time.
 * On PGlite (`db.embedded`), which runs no autovacuum, a table that lost rows
 * is vacuumed right after, so the space is reused and an in-memory database
 * stays bounded; a PostgreSQL server's autovacuum does that on its own.
 * The timer is unref'd: it never keeps the process alive.
 */
export function startSweeper(db: Database, sweeps: readonly Sweep[], everyMs: number): Sweeper {
  let running: Promise<void> | undefined;
  const once = async () => {
    for (const sweep of sweeps) {
      try {
        const removed = await sweep.run();
        if (removed > 0 && db.embedded === true)
          await db.query(`VACUUM ${sqlTableName(sweep.table).sql}`);
      } catch (error) {
        console.warn(
          `sweep of ${sweep.table} failed: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }
  };
  const runOnce = () => {
    // One run at a time: a slow sweep is not stacked under the next tick.
    running ??= once().finally(() => {
      running = undefined;
    });
    return running;
  };
  const timer = sweeps.length > 0 ? setInterval(runOnce, everyMs) : undefined;
  timer?.unref();
  if (sweeps.length > 0) void runOnce();
  return {
    runOnce,
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
