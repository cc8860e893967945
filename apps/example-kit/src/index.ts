/**
 * @mrtr/example-kit: what the example MCP servers (apps/notes-server,
 * apps/service-deleter, apps/file-deleter) share and none of the published packages should own:
 * opening PostgreSQL or PGlite, bearer tokens, ticket secrets, listening.
 *
 * @example
 * ```ts
 * import { bearerAuthenticator, listen, openDatabase, parseTokens } from '@mrtr/example-kit';
 * import { type AnyToolDefinition, createMcpEndpoint } from '@mrtr/server';
 *
 * declare const tools: AnyToolDefinition[];
 * const serverInfo = { name: 'my-app', version: '1.0.0' };
 * const db = await openDatabase(process.env.DATABASE_URL, { dataDir: './.data/my-app' });
 * const endpoint = createMcpEndpoint({ serverInfo, tools, authenticate: bearerAuthenticator(parseTokens(process.env.MRTR_TOKENS ?? '')) });
 * const running = await listen(endpoint, { port: 3000 });
 * ```
 * @packageDocumentation
 */

export {
  APPROVAL_BASE_PATH,
  type ExampleApprovals,
  type ExampleApprovalsOptions,
  exampleApprovals,
} from './approvals.js';
export {
  bearerAuthenticator,
  parsePageUsers,
  parseTokens,
  randomSecret,
  randomToken,
} from './auth.js';
export {
  atStartUp,
  type Database,
  openDatabase,
  type Queryable,
  type QueryResult,
  START_UP_PATIENCE_MS,
} from './db.js';
export { announcePageUsers, readServerEnv, runServer, type ServerEnv } from './env.js';
export { type TicketKeyOption, type TicketKeyOptions, ticketKeys } from './keys.js';
export {
  isUnreachable,
  type UntilReachableOptions,
  untilReachable,
} from './reachable.js';
export {
  JWKS_MAX_AGE_SECONDS,
  JWKS_PATH,
  type ListenOptions,
  listen,
  listenApp,
  type RunningServer,
  type Served,
} from './serve.js';
export { type Sweep, type Sweeper, startSweeper } from './sweeper.js';
export { singleLineText, stacksMarks, storableText } from './text.js';
