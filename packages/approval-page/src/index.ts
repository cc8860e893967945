/**
 * @mrtr/approval-page: URL-mode confirmation (MCP 2026-07-28
 * `client/elicitation`, URL mode) on the server's own origin. The gate opens
 * an approval through {@link createApprovalChannel} and sends its URL; the
 * person signs in on {@link createApprovalPage} as the tool call's principal
 * and approves or denies; the retry, on any instance, reads the decision.
 * A `presence` approval is approved only with a passkey (WebAuthn, user
 * verification) whose challenge commits to this action ({@link approvalChallenge});
 * the principal registers passkeys on `<basePath>/passkeys` (by default its
 * first one only: `passkeyRegistration`).
 * Approvals, decisions, sign-in sessions and passkeys live in an {@link ApprovalStore}
 * shared by every instance: {@link PostgresApprovalStore} (pg or PGlite, the
 * replay store's database), {@link RedisApprovalStore}, or
 * {@link MemoryApprovalStore} for one process.
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * import { getRequestListener } from '@hono/node-server';
 * import { createApprovalChannel, createApprovalPage, MemoryApprovalStore } from '@mrtr/approval-page';
 * import { toNodeHandler } from '@mrtr/node';
 * import type { McpEndpoint } from '@mrtr/server';
 *
 * declare const endpoint: McpEndpoint; // createMcpEndpoint of @mrtr/server, its gate given `channel`
 * const mcp = toNodeHandler(endpoint);
 * const store = new MemoryApprovalStore();
 * const location = { origin: 'http://127.0.0.1:3000', basePath: '/approve' };
 * const channel = createApprovalChannel({ store, ...location }); // give it to the gate
 * const page = createApprovalPage({ store, ...location, signIn: { users: { alice: process.env.ALICE_PAGE_PASSWORD ?? '' } } });
 * const approvals = getRequestListener(page);
 * createServer((req, res) => (req.url?.startsWith('/approve/') ? approvals(req, res) : mcp(req, res))).listen(3000);
 * ```
 * @module @mrtr/approval-page
 * @packageDocumentation
 */

export { APPROVE_AFTER_MS } from './approve-script.js';
export {
  approvalChallenge,
  CHALLENGE_DOMAIN,
  type ChallengeInput,
  newRandom,
  userHandle,
} from './challenge.js';
export {
  type ApprovalChannelOptions,
  createApprovalChannel,
  type PageLocation,
} from './channel.js';
export { CONTENT_SECURITY_POLICY, SECURITY_HEADERS } from './http.js';
export type { PasskeyChange, PasskeyRegistration, PasskeyRegistrationRule } from './kit.js';
export { MemoryApprovalStore, type MemoryApprovalStoreOptions } from './memory-store.js';
export { type ApprovalPage, type ApprovalPageOptions, createApprovalPage } from './page.js';
export { CEREMONY_TIMEOUT_MS, CHALLENGE_TTL_MS } from './passkey.js';
export type {
  ChallengeRequest,
  PasskeyCredential,
  PasskeyStore,
  PasskeyTransport,
  PendingChallenge,
  RegistrationChallenge,
} from './passkey-store.js';
export {
  type ApprovalTableOptions,
  DEFAULT_APPROVAL_TABLE,
  DEFAULT_CREDENTIAL_TABLE,
  DEFAULT_REGISTRATION_TABLE,
  DEFAULT_SESSION_TABLE,
  migrateApprovalTables,
  PostgresApprovalStore,
  type PostgresApprovalStoreOptions,
} from './postgres-store.js';
export {
  RedisApprovalStore,
  type RedisApprovalStoreOptions,
  type RedisCommander,
} from './redis-store.js';
export type { PasswordSignInOptions, SignedIn, SignInHook } from './sign-in.js';
export { longEnoughPagePassword, MIN_PAGE_PASSWORD_LENGTH } from './sign-in.js';
export {
  type ApprovalStore,
  ApprovalStoreUnavailableError,
  type ChallengeResult,
  type DecideRefusal,
  type DecideRequest,
  type DecideResult,
  type FinalDecision,
  type SessionRecord,
  type SessionStore,
  type StoredApproval,
} from './store.js';
