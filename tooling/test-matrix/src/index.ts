/**
 * @mrtr/test-matrix: every example app × adapter (node, Express, Hono, and
 * the official SDK through `@mrtr/sdk` where the app has an SDK entry point)
 * × replay store, driven the same way over real HTTP. Each app has one list
 * of scenarios (happy path, decline, cancel then accept, missing answer,
 * tampered ticket, changed arguments, other principal, expired ticket, chosen
 * value outside the signed set, typed name mismatch, re-issue after
 * completion, 20 concurrent presentations on two instances, capabilities
 * without form elicitation, and the official `@modelcontextprotocol/client`
 * on 2026-07-28 and on its 2025-era default); each scenario asserts what is
 * left in the database, not only what was answered. Every JSON-RPC message
 * of 2026-07-28 sent or received is checked against the official schema.json
 * (`@mrtr/spec-schema`).
 *
 * `pnpm test` runs it as `test/matrix.test.ts`, which prints the table at the end.
 *
 * @example
 * ```ts
 * import { COMBINATIONS, scenariosOf, startCombination } from '@mrtr/test-matrix';
 * const c = COMBINATIONS.find((x) => x.label === 'notes-server · hono · pglite')!;
 * const running = await startCombination(c, 'try1');
 * for (const s of scenariosOf(c.app)) await s.run?.(running); // throws on the first red cell
 * await running.close();
 * ```
 * @packageDocumentation
 */
import type { AppName } from './combination.js';
import { FILE_DELETER_SCENARIOS } from './scenarios/file-deleter.js';
import { NOTES_SCENARIOS } from './scenarios/notes.js';
import { SERVICE_DELETER_SCENARIOS } from './scenarios/service-deleter.js';
import type { Scenario } from './scenarios/types.js';

export { postgresReachable, redisReachable } from '@mrtr/test-services';
export { ADAPTERS, type AdapterName } from './adapters.js';
export { STORES, type StoreName } from './backends.js';
export {
  APPS,
  type AppName,
  COMBINATIONS,
  type Combination,
  type RunningCombination,
  startCombination,
} from './combination.js';
export { COLUMNS, type Scenario, type ScenarioId } from './scenarios/types.js';
export { type Cell, ResultTable } from './table.js';

/** The scenarios of `app`, one per column of {@link COLUMNS}, in its order. */
export function scenariosOf(app: AppName): Scenario[] {
  if (app === 'notes-server') return NOTES_SCENARIOS;
  if (app === 'file-deleter') return FILE_DELETER_SCENARIOS;
  return SERVICE_DELETER_SCENARIOS;
}
