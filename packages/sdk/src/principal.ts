import type { AuthInfo, ServerContext } from '@modelcontextprotocol/server';

/**
 * Who a gated call acts for: the principal a ticket is bound to. Return
 * `undefined` when the call has none; the gated tool then refuses it
 * (JSON-RPC `-32603`, nothing asked or changed).
 */
export type PrincipalOf = (ctx: ServerContext) => string | undefined | Promise<string | undefined>;

/**
 * The default {@link PrincipalOf}: from the SDK's `authInfo` of the request
 * (`ctx.http.authInfo`, what your token verifier handed to
 * `handler.fetch(request, { authInfo })` or `transport.handleRequest`), the
 * subject `authInfo.extra.sub` when the verifier set one (the person, as a
 * JWT's `sub`), else `authInfo.clientId` (the OAuth client). A call without
 * `authInfo` (stdio, or an HTTP entry without authentication) has no
 * principal: pass your own `principal` hook there.
 */
export function principalFromAuthInfo(ctx: ServerContext): string | undefined {
  return principalOfAuthInfo(ctx.http?.authInfo);
}

/**
 * The principal id of `authInfo`: `extra.sub` when a non-empty string, else
 * a non-empty `clientId`, else `undefined` (no `authInfo`, or neither set),
 * which the gate refuses (`-32603`, nothing asked). {@link principalFromAuthInfo}
 * reads it from a handler's context. Never throws.
 */
export function principalOfAuthInfo(authInfo: AuthInfo | undefined): string | undefined {
  if (!authInfo) return undefined;
  const sub = authInfo.extra?.sub;
  if (typeof sub === 'string' && sub !== '') return sub;
  return authInfo.clientId !== '' ? authInfo.clientId : undefined;
}
