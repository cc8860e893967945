import type { StandardSchemaWithJSON } from '@modelcontextprotocol/server';
import type { GatedTool } from '@mrtr/gate';

/**
 * The gated tool's arguments as the Standard Schema `McpServer.registerTool`
 * takes: `tools/list` (and the SDK's `Mcp-Param-*` header check) get the
 * gated tool's own `inputSchema` (undeclared arguments refused), and
 * validation is the gated tool's `parse`.
 */
export function argumentsSchema<Args>(
  tool: GatedTool<Args>,
): StandardSchemaWithJSON<unknown, Args> {
  return {
    '~standard': {
      version: 1,
      vendor: '@mrtr/sdk',
      validate(value) {
        try {
          return { value: tool.parse(value) };
        } catch (error) {
          return { issues: [{ message: error instanceof Error ? error.message : String(error) }] };
        }
      },
      jsonSchema: {
        input: () => ({ ...tool.inputSchema }),
        output: () => ({ ...tool.inputSchema }),
      },
    },
  };
}
