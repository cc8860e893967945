/**
 * What each 2026-07-28 client scenario of the official conformance suite asks
 * of a client, done with `@mrtr/client` (see client-entry.ts, which runs them).
 *
 * The answerer here stands in for the person, as the scripted answerers of
 * our tests do: the suite's fixtures ask for one boolean `confirmed`, which it
 * accepts; anything else it declines. `@mrtr/client` itself never answers.
 */
import type { Answerer, McpClient, ToolInfo } from '@mrtr/client';

/** The referee's stand-in person: confirms the suite's one-boolean forms, declines the rest. */
export const referee: Answerer = {
  async form(q) {
    const fields = Object.entries(q.requestedSchema.properties);
    const [name, field] = fields[0] ?? [];
    if (fields.length === 1 && name === 'confirmed' && field?.type === 'boolean')
      return { action: 'accept', content: { confirmed: true } };
    return { action: 'decline' };
  },
};

/** Arguments that satisfy a tool's required properties (a string, 1, true, {} or []). */
export function sampleArguments(tool: ToolInfo): Record<string, unknown> {
  const sample: Record<string, unknown> = {
    string: 'us-west1',
    integer: 1,
    number: 1,
    boolean: true,
    object: {},
    array: [],
  };
  const props = (tool.inputSchema.properties ?? {}) as Record<string, { type?: string }>;
  return Object.fromEntries(
    (tool.inputSchema.required ?? []).map((name) => [name, sample[props[name]?.type ?? 'string']]),
  );
}

/** What each scenario needs a client to do, after `server/discover` and `tools/list`. */
export function scenarioSteps(
  client: McpClient,
): Record<string, (tools: ToolInfo[]) => Promise<void>> {
  return {
    tools_call: async () => {
      const { result } = await client.callTool('add_numbers', { a: 2, b: 3 });
      console.log(result.content[0]?.text);
    },
    // The scenario refuses the first request with -32022; the client retries by itself.
    'request-metadata': async () => {},
    'sep-2322-client-request-state': async () => {
      // An unrelated call made while the person is still being asked: it must carry no MRTR fields.
      const asking: Answerer = {
        async form(q) {
          await client.callTool('test_mrtr_unrelated');
          return (referee.form as NonNullable<Answerer['form']>)(q);
        },
      };
      await client.callTool('test_mrtr_echo_state', {}, { answerer: asking });
      await client.callTool('test_mrtr_no_state');
      await client.callTool('test_mrtr_no_result_type');
    },
    'http-standard-headers': async (tools) => {
      for (const tool of tools) await client.callTool(tool.name, sampleArguments(tool));
      const { resources } = (await client.request('resources/list', {})) as {
        resources: { uri: string }[];
      };
      for (const r of resources) await client.readResource(r.uri);
      const { prompts } = (await client.request('prompts/list', {})) as {
        prompts: { name: string }[];
      };
      for (const p of prompts) await client.getPrompt(p.name);
    },
    'http-custom-headers': async () => {
      const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as {
        toolCalls?: { name: string; arguments: Record<string, unknown> }[];
      };
      if (!context.toolCalls?.length) throw new Error('MCP_CONFORMANCE_CONTEXT has no toolCalls');
      for (const call of context.toolCalls) await client.callTool(call.name, call.arguments);
    },
    // listTools leaves the invalid tools out; every tool it kept is called.
    'http-invalid-tool-headers': async (tools) => {
      for (const tool of tools) await client.callTool(tool.name, sampleArguments(tool));
    },
    // Listing is the whole step: a network $ref in an inputSchema is never fetched.
    'json-schema-ref-no-deref': async () => {},
    'json-schema-2020-12-preservation': async (tools) => {
      const focal = tools.find((t) => t.name === 'json_schema_2020_12_tool');
      if (!focal) throw new Error('tools/list has no json_schema_2020_12_tool');
      await client.callTool('json_schema_echo', { schema: focal.inputSchema });
    },
  };
}
