/**
 * @mrtr/replay: the `ReplayStore` contract that keeps a confirmed MCP
 * operation at most once, and an in-memory store for single-process servers.
 *
 * @example
 * ```ts
 * import { MemoryReplayStore } from '@mrtr/replay';
 * const store = new MemoryReplayStore();
 * const r = await store.once({ nonce, requestDigest, expiresAt: Date.now() + 300_000 }, async () => {
 *   await deleteNote(id);
 *   return { deleted: id };
 * });
 * // r.status: 'performed' | 'replayed' | 'refused'
 * ```
 * @packageDocumentation
 */
export {
  type ClaimRequest,
  type Json,
  type OnceResult,
  type ReplayStore,
  ReplayStoreUnavailableError,
} from './contract.js';
export { MemoryReplayStore, type MemoryReplayStoreOptions } from './memory.js';
