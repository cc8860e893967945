/** The JSON-RPC error bodies this adapter writes itself, before or instead of the endpoint. */

export const JSON_TYPE = { 'content-type': 'application/json' } as const;

/** A JSON-RPC error without an id (`basic/index`: the id could not be read). */
export function rpcError(status: number, code: number, message: string) {
  return { status, body: JSON.stringify({ jsonrpc: '2.0', error: { code, message } }) };
}

/** {@link rpcError} as a web `Response`, for the converted path. */
export function rpcResponse(status: number, code: number, message: string): Response {
  const { body } = rpcError(status, code, message);
  return new Response(body, { status, headers: JSON_TYPE });
}

/** A whole HTTP/1.1 response with a JSON-RPC error body and `Connection: close`, for a raw socket. */
export function rawRpcError(status: number, reason: string, message: string): string {
  const { body } = rpcError(status, -32600, message);
  return (
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}
