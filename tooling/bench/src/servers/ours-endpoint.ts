/**
 * The flow benchmark's endpoint on this project's stack: `@mrtr/server` with
 * the tool guarded by `@mrtr/gate` (`ConfirmationGate` with a `TicketSealer`
 * and a `MemoryReplayStore`). Served over HTTP by `ours.ts`, called in
 * process by `../endpoint.ts`.
 */
import { ConfirmationGate, type GateRequest, type GateSpec, StaleTargetError } from '@mrtr/gate';
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
  const timing = process.env.BENCH_GATE_TIMING === '1' ? gateTiming(gate) : undefined;
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
          if (!options.canned && timing) return timing.run(context, spec(workspace));
          if (!options.canned) return gate.run(context, spec(workspace));
          return context.requestState === undefined ? canned.ask : canned.done;
        },
      },
    ],
  });
}

/**
 * `BENCH_GATE_TIMING=1` (diagnostic, off by default): the CPU each
 * `ConfirmationGate.run` takes inside the running server, by round, from
 * `process.cpuUsage` before the call and when its promise settles. The
 * memory store never waits, so a call runs to its end in one turn of the
 * event loop and nothing else is counted. Printed to stderr whenever the
 * benchmark asks the server for its memory (after each level), then reset:
 * it measures what `docs/benchmarks.md` compares with the in-process figures.
 * The two `cpuUsage` calls add about a microsecond per round.
 */
function gateTiming(gate: ConfirmationGate) {
  const total = { cpu: [0, 0], calls: [0, 0] };
  process.on('message', (message: { type?: string }) => {
    if (message?.type !== 'memory' || total.calls[1] === 0) return;
    const us = (round: 0 | 1) =>
      ((total.cpu[round] as number) / (total.calls[round] as number)).toFixed(1);
    process.stderr.write(
      `gate timing: ConfirmationGate.run CPU per call, round 1 ${us(0)} µs (${total.calls[0]} calls), round 2 ${us(1)} µs (${total.calls[1]} calls)\n`,
    );
    total.cpu = [0, 0];
    total.calls = [0, 0];
  });
  return {
    run: <View>(request: GateRequest, spec: GateSpec<View, void>) => {
      const round = request.requestState === undefined ? 0 : 1;
      const start = process.cpuUsage();
      return gate.run(request, spec).finally(() => {
        const used = process.cpuUsage(start);
        (total.cpu[round] as number) += used.user + used.system;
        (total.calls[round] as number)++;
      });
    },
  };
}
