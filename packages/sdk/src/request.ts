import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  type McpServer,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { GateRequest } from '@mrtr/gate';
import { ClientCapabilitiesSchema, ImplementationSchema } from '@mrtr/wire';

/**
 * The protocol era a server instance serves: `modern` (2026-07-28, each
 * request carries its client's capabilities in `_meta`) or `legacy` (a
 * 2025-era connection, capabilities declared once at `initialize`).
 */
export type Era = 'modern' | 'legacy';

/** The first revision whose requests carry the `_meta` envelope. */
const MODERN_REVISION = '2026-07-28';

/**
 * The era `server` is bound to. The SDK binds an instance at construction
 * (`createMcpHandler`, `serveStdio`) or at the `initialize` handshake; an
 * instance bound to neither (stateless 2025-era serving) is legacy with no
 * declared capabilities. Revisions are dates, so they compare as strings.
 */
export function eraOf(server: McpServer): Era {
  // Deprecated for per-request reads, but it is the era of the instance, which is what decides here.
  const version = server.server.getNegotiatedProtocolVersion();
  return version !== undefined && version >= MODERN_REVISION ? 'modern' : 'legacy';
}

/**
 * What the gate needs to know about one gated `tools/call` on the SDK:
 * capabilities and client identity from this request's `_meta` envelope on
 * 2026-07-28, from the session's `initialize` on a 2025-era connection (never
 * from a `_meta` a 2025-era client adds); `inputResponses` as the SDK lifted
 * them (or as its shim collected them); `requestState` as the router kept it.
 */
export function gateRequestOf(
  server: McpServer,
  ctx: ServerContext,
  era: Era,
  call: { principal: string; name: string; rawArgs: unknown; requestState: string | undefined },
): GateRequest {
  const envelope: Record<string, unknown> = { ...ctx.mcpReq.envelope };
  const legacy = era === 'legacy';
  // The 2025-era accessors are deprecated for 2026-07-28 reads only; here they read the session.
  const capabilities = ClientCapabilitiesSchema.safeParse(
    legacy ? server.server.getClientCapabilities() : envelope[CLIENT_CAPABILITIES_META_KEY],
  );
  const clientInfo = ImplementationSchema.safeParse(
    legacy ? server.server.getClientVersion() : envelope[CLIENT_INFO_META_KEY],
  );
  const args = call.rawArgs;
  return {
    principal: call.principal,
    method: 'tools/call',
    name: call.name,
    arguments: args !== null && typeof args === 'object' ? { ...args } : {},
    capabilities: capabilities.success ? capabilities.data : undefined,
    inputResponses: ctx.mcpReq.inputResponses,
    requestState: call.requestState,
    requestId: ctx.mcpReq.id,
    // `...{}` first: V8 (Node 20) promotes a leading spread's copy that takes more properties.
    meta: legacy ? { ...ctx.mcpReq._meta } : { ...{}, ...ctx.mcpReq._meta, ...envelope },
    clientInfo: clientInfo.success ? clientInfo.data : undefined,
  };
}
