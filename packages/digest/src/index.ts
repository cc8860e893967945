/**
 * @mrtr/digest: RFC 8785 canonical JSON and domain-separated SHA-256 digests
 * of it, used to bind a confirmation ticket to the exact tool arguments.
 *
 * @example
 * ```ts
 * import { digestJson } from '@mrtr/digest';
 * digestJson({ title: 'Roadmap', workspaceUri: 'notes://team' }) ===
 *   digestJson({ workspaceUri: 'notes://team', title: 'Roadmap' }); // true
 * ```
 * @module @mrtr/digest
 * @packageDocumentation
 */
export {
  CANONICALIZE_MAX_DEPTH,
  CanonicalizeError,
  type CanonicalizeErrorCode,
  canonicalize,
} from './canonicalize.js';
export { DIGEST_DOMAIN, digestCanonical, digestEquals, digestJson } from './digest.js';
