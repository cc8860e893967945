/**
 * What the three servers of the flow benchmark share: the gated tool, its
 * in-memory records, the caller's credentials, the two request bodies a client
 * sends for one gated `tools/call` (MCP 2026-07-28, `basic/patterns/mrtr`), and
 * the IPC messages between a server child process and the benchmark.
 *
 * The tool is `delete_record {workspace}`: round 1 answers an
 * `InputRequiredResult` whose form asks which record to delete (an enum of the
 * workspace's record ids, known only to the server) and for a `confirm`
 * boolean; round 2 carries `inputResponses.confirm_delete` and the echoed
 * `requestState`, and deletes the chosen record.
 */
import { formElicitation, inputRequired } from '@mrtr/wire';

/** The tool every server serves. */
export const TOOL = 'delete_record';
/** The `inputRequests` key of its question. */
export const KEY = 'confirm_delete';
/** The bearer token the load generator sends, and the principal it stands for. */
export const TOKEN = 'bench-token-5f2a';
export const PRINCIPAL = 'user_5f2a';
/** Ticket / codec secret (both need at least 32 bytes). */
export const SECRET = 'bench-master-secret-0123456789abcdefghijklmnop';
/** The workspace the load generator deletes from, and the record it picks. */
export const WORKSPACE = 'team';
export const CHOSEN = 'rec-03';

/** One record of the in-memory "database". */
export interface BenchRecord {
  id: string;
  workspace: string;
  title: string;
  version: number;
}

/**
 * The records: eight per workspace. Each server owns its own copy.
 * @returns a map from record id to record.
 */
export function seedRecords(): Map<string, BenchRecord> {
  const records = new Map<string, BenchRecord>();
  for (const workspace of [WORKSPACE, 'ops']) {
    for (let i = 1; i <= 8; i++) {
      const id = `${workspace === WORKSPACE ? 'rec' : 'ops'}-${String(i).padStart(2, '0')}`;
      records.set(id, { id, workspace, title: `Record ${i} of ${workspace}`, version: 1 });
    }
  }
  return records;
}

/** Record ids of `workspace`, in insertion order: the candidates the form offers. */
export function candidatesOf(records: Map<string, BenchRecord>, workspace: string): string[] {
  const ids: string[] = [];
  for (const record of records.values()) if (record.workspace === workspace) ids.push(record.id);
  return ids;
}

/**
 * The mutation: delete the record, then put a fresh copy back (next version)
 * so that every later flow finds the same candidates. What is measured is the
 * gate around the mutation, not the table.
 * @returns the deleted record, or `undefined` when it no longer exists.
 */
export function deleteRecord(
  records: Map<string, BenchRecord>,
  id: string,
): BenchRecord | undefined {
  const record = records.get(id);
  if (!record) return undefined;
  records.delete(id);
  // Object.assign, not `{ ...record, version }`: V8 (Node 20) promotes what that form makes.
  records.set(id, Object.assign({}, record, { version: record.version + 1 }));
  return record;
}

/** The flat form schema of the question (`requestedSchema`). */
export function formSchema(candidates: string[]) {
  return {
    type: 'object' as const,
    properties: {
      record_id: { type: 'string' as const, title: 'Record to delete', enum: candidates },
      confirm: { type: 'boolean' as const, title: 'Delete it for good?' },
    },
    required: ['record_id', 'confirm'],
  };
}

/** The question's text. */
export const question = (workspace: string, n: number) =>
  `Delete one of the ${n} records of workspace "${workspace}"? This cannot be undone.`;

/** HTTP headers of both rounds (Streamable HTTP, 2026-07-28). */
export const HEADERS: Record<string, string> = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': TOOL,
  authorization: `Bearer ${TOKEN}`,
};

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'mrtr-bench', version: '0.0.0' },
  'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
};

/** Round 1: the plain `tools/call`. */
export const ROUND1 = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: TOOL, arguments: { workspace: WORKSPACE }, _meta: META },
});

const ANSWER = JSON.stringify({
  [KEY]: { action: 'accept', content: { record_id: CHOSEN, confirm: true } },
});
const round2Head = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"${TOOL}","arguments":{"workspace":"${WORKSPACE}"},"_meta":${JSON.stringify(META)},"inputResponses":${ANSWER},"requestState":`;

/** Round 2: the retry with a new id, the answer, and `requestState` echoed byte for byte. */
export function round2(requestState: string): string {
  return `${round2Head}${JSON.stringify(requestState)}}}`;
}

/** Pull `requestState` out of a round-1 response body (JSON or one SSE event). */
export function requestStateOf(body: string): string | undefined {
  const m = /"requestState":"([^"\\]+)"/.exec(body);
  return m?.[1];
}

/** Whether a round-2 response body is a complete, non-error tool result. */
export function completedOk(body: string): boolean {
  return body.includes('"resultType":"complete"') && !body.includes('"isError":true');
}

/** Messages a server child sends to the benchmark over IPC (sizes in bytes). */
export type ServerMessage =
  | { type: 'ready'; port: number }
  | { type: 'memory'; heapUsed: number; rss: number };
/**
 * Messages the benchmark sends to a server child: `exit`, or `memory` to
 * collect garbage (the child runs with `--expose-gc`) and report what is live.
 */
export type ControlMessage = { type: 'exit' } | { type: 'memory' };

/**
 * Start `listener` on a free loopback port, report `{type:'ready', port}` to
 * the parent process, answer `{type:'memory'}`, and exit cleanly (so
 * `--cpu-prof` writes its profile) when the parent says `{type:'exit'}` or
 * goes away.
 */
export async function serveChild(
  listener: (
    req: import('node:http').IncomingMessage,
    res: import('node:http').ServerResponse,
  ) => void,
): Promise<void> {
  const { createServer } = await import('node:http');
  const server = createServer(listener);
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  const exit = () => {
    server.closeAllConnections();
    server.close();
    process.exit(0);
  };
  process.on('message', (message: ControlMessage) => {
    if (message.type === 'exit') exit();
    if (message.type === 'memory') {
      (globalThis as { gc?: () => void }).gc?.();
      const { heapUsed, rss } = process.memoryUsage();
      process.send?.({ type: 'memory', heapUsed, rss } satisfies ServerMessage);
    }
  });
  process.on('disconnect', exit);
  process.send?.({ type: 'ready', port: address.port } satisfies ServerMessage);
}

/**
 * The fixed results the diagnostic and floor servers answer with: round 1's
 * `InputRequiredResult` (the same form ours asks, and a `requestState` as
 * long as @mrtr/ticket's for this call, 212 characters, with no sealing) and
 * round 2's `CallToolResult`. Shared so that every canned server sends the
 * same bytes as ours.
 */
export function cannedResults() {
  const candidates = candidatesOf(seedRecords(), WORKSPACE);
  const ask = inputRequired(
    { [KEY]: formElicitation(question(WORKSPACE, candidates.length), formSchema(candidates)) },
    'v1.k1.'.padEnd(212, 'x'),
  );
  const done = {
    resultType: 'complete' as const,
    content: [{ type: 'text' as const, text: `Deleted rec-03 from ${WORKSPACE}.` }],
    isError: false,
  };
  return { ask, done };
}
