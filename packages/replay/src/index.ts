/**
 * @mrtr/replay: the `ReplayStore` contract that keeps a confirmed MCP
 * operation at most once, and an in-memory store for single-process servers.
 *
 * @example
 * ```ts
 * import { MemoryReplayStore } from '@mrtr/replay';
 *
 * declare const nonce: string, requestDigest: string; // from the ticket and the answer
 * declare const id: string;
 * declare function deleteNote(id: string): Promise<void>;
 * const store = new MemoryReplayStore();
 * const r = await store.once({ nonce, requestDigest, expiresAt: Date.now() + 300_000 }, async () => {
 *   await deleteNote(id);
 *   return { deleted: id };
 * });
 * // r.status: 'performed' | 'replayed' | 'refused'
 * ```
 *
 * Stores shared by several server instances: `@mrtr/replay-redis`,
 * `@mrtr/replay-postgres`. Every store passes the suite exported from
 * `@mrtr/replay/contract-tests`.
 * @module @mrtr/replay
 * @packageDocumentation
 */
export {
  assertOnceRequest,
  type Json,
  MAX_EXPIRES_AT,
  MAX_ONCE_FIELD_LENGTH,
  type OnceRequest,
  type OnceResult,
  type ReplayStore,
  ReplayStoreUnavailableError,
} from './contract.js';
export { LedgerReplayStore } from './ledger.js';
export { MemoryReplayStore, type MemoryReplayStoreOptions } from './memory.js';
