/**
 * The flow benchmark's endpoint on this project's stack: `@mrtr/server` with
 * the tool guarded by `@mrtr/gate` (`ConfirmationGate` with a `TicketSealer`
 * and a `MemoryReplayStore`). Served over HTTP by `ours.ts`, called in
 * process by `../endpoint.ts`.
 */
import { ConfirmationGate, type GateSpec, StaleTargetError } from '@mrtr/gate';
import { MemoryReplayStore } from '@mrtr/replay';
import { createMcpEndpoint, type McpEndpoint } from '@mrtr/server';
import { TicketSealer } from '@mrtr/ticket';
import { textResult } from '@mrtr/wire';
import {
  type BenchRecord,
  candidatesOf,
  cannedResults,
  deleteRecord,
  formSchema,
  KEY,
  PRINCIPAL,
  question,
  SECRET,
  TOKEN,
  TOOL,
} from '../flow/common.js';

/** The gate and the confirmation spec of `delete_record {workspace}` over `records`. */
export function gatedDelete(records: Map<string, BenchRecord>) {
  const gate = new ConfirmationGate({
    sealer: new TicketSealer({ keys: [{ kid: 'k1', secret: SECRET }], ttlSeconds: 300 }),
    store: new MemoryReplayStore(),
  });
  const spec = (workspace: string): GateSpec<undefined, void> => ({
    key: KEY,
    candidateField: 'record_id',
    prepare: async () => {
      const candidates = candidatesOf(records, workspace);
      if (candidates.length === 0)
        return { result: textResult(`Workspace "${workspace}" has no records.`) };
      return { candidates, view: undefined };
    },
    question: ({ candidates }, notice) => ({
      message: `${notice ? `${notice} ` : ''}${question(workspace, candidates?.length ?? 0)}`,
      requestedSchema: formSchema(candidates ?? []),
    }),
    consents: (content) => content.confirm === true,
    perform: async ({ content }) => {
      const id = content.record_id as string;
      // Re-read the live record: gone or moved since the form was shown means ask again.
      if (records.get(id)?.workspace !== workspace) throw new StaleTargetError(id);
      deleteRecord(records, id);
      return textResult(`Deleted ${id} from ${workspace}.`);
    },
  });
  return { gate, spec };
}

/**
 * The MCP endpoint with the gated tool; `canned` replaces the gate by fixed
 * results of the same shapes (to measure the endpoint alone).
 */
export function oursEndpoint(
  records: Map<string, BenchRecord>,
  options: { canned?: boolean } = {},
): McpEndpoint {
  const { gate, spec } = gatedDelete(records);
  const bearer = `Bearer ${TOKEN}`;
  const canned = cannedResults();
  return createMcpEndpoint({
    serverInfo: { name: 'bench-ours', version: '0.0.0' },
    authenticate: (request) =>
      request.headers.get('authorization') === bearer ? { id: PRINCIPAL } : undefined,
    tools: [
      {
        name: TOOL,
        description: 'Delete one record of a workspace, after a person confirms which.',
        inputSchema: {
          type: 'object',
          properties: { workspace: { type: 'string' } },
          required: ['workspace'],
        },
        parse(args: unknown) {
          const workspace = (args as { workspace?: unknown }).workspace;
          if (typeof workspace !== 'string') throw new Error('workspace must be a string');
          return { workspace };
        },
        handler: ({ workspace }: { workspace: string }, context) => {
          if (!options.canned) return gate.run(context, spec(workspace));
          return context.requestState === undefined ? canned.ask : canned.done;
        },
      },
    ],
  });
}
