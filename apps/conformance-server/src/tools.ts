import type { AnyToolDefinition, ToolDefinition } from '@mrtr/server';
import { ErrorCode, formElicitation, inputRequired, McpError, textResult } from '@mrtr/wire';
import { RED_PIXEL_PNG, silentWav } from './media.js';

/**
 * The plain fixture tools of the conformance server scenarios
 * (`tools-call-*`, `server-stateless`, `json-schema-2020-12`,
 * `http-custom-header-server-validation`). The Multi Round-Trip ones are in
 * `mrtr-tools.ts`.
 */

const noArgs = { type: 'object', properties: {} } as const;
const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    });
  });

function tool(
  name: string,
  description: string,
  handler: ToolDefinition['handler'],
  inputSchema: ToolDefinition['inputSchema'] = noArgs,
): AnyToolDefinition {
  return { name, description, inputSchema, handler } as AnyToolDefinition;
}

/** JSON Schema 2020-12 keywords that must survive `tools/list` unchanged (SEP-1613, SEP-2106). */
const JSON_SCHEMA_2020_12_INPUT = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: {
    address: {
      $anchor: 'addressDef',
      type: 'object',
      properties: { street: { type: 'string' }, city: { type: 'string' } },
    },
  },
  properties: {
    name: { type: 'string' },
    address: { $ref: '#/$defs/address' },
    contactMethod: { type: 'string', enum: ['phone', 'email'] },
    phone: { type: 'string' },
    email: { type: 'string' },
  },
  allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
  if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
  // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then/else keyword, not a thenable.
  then: { required: ['phone'] },
  else: { required: ['email'] },
  additionalProperties: false,
} as const;

/** The content, error, progress, logging and diagnostic tools. */
export function plainTools(): AnyToolDefinition[] {
  return [
    tool('test_simple_text', 'Returns one text block.', () =>
      textResult('This is a simple text response for testing.'),
    ),
    tool('test_image_content', 'Returns a 1x1 red PNG image.', () => ({
      resultType: 'complete',
      content: [{ type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' }],
    })),
    tool('test_audio_content', 'Returns a short silent WAV clip.', () => ({
      resultType: 'complete',
      content: [{ type: 'audio', data: silentWav(), mimeType: 'audio/wav' }],
    })),
    tool('test_embedded_resource', 'Returns an embedded text resource.', () => ({
      resultType: 'complete',
      content: [
        {
          type: 'resource',
          resource: {
            uri: 'test://embedded-resource',
            mimeType: 'text/plain',
            text: 'This is an embedded resource content.',
          },
        },
      ],
    })),
    tool('test_multiple_content_types', 'Returns text, an image and a resource.', () => ({
      resultType: 'complete',
      content: [
        { type: 'text', text: 'Multiple content types test:' },
        { type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' },
        {
          type: 'resource',
          resource: {
            uri: 'test://mixed-content-resource',
            mimeType: 'application/json',
            text: JSON.stringify({ test: 'data', value: 123 }),
          },
        },
      ],
    })),
    tool('test_error_handling', 'Always fails, as a tool error the model can read.', () =>
      textResult('This tool intentionally returns an error for testing', { isError: true }),
    ),
    tool('test_tool_with_progress', 'Reports progress 0, 50 and 100 of 100.', async (_a, ctx) => {
      for (const step of [0, 50, 100]) {
        ctx.progress(step, 100);
        if (step < 100) await sleep(50, ctx.signal);
      }
      return textResult('Progress tool completed.');
    }),
    tool('test_logging_tool', 'Logs three messages at info level.', (_a, ctx) => {
      for (const text of [
        'Tool execution started',
        'Tool processing data',
        'Tool execution completed',
      ])
        ctx.log('info', text, 'test_logging_tool');
      return textResult('Logging tool completed.');
    }),
    tool(
      'test_missing_capability',
      'Needs sampling; refuses a client that did not declare it.',
      (_a, ctx) => {
        if (ctx.capabilities?.sampling === undefined) {
          throw new McpError(
            ErrorCode.MissingRequiredClientCapability,
            'test_missing_capability needs the sampling capability',
            { requiredCapabilities: { sampling: {} } },
          );
        }
        return textResult('The client declared sampling.');
      },
    ),
    tool(
      'test_streaming_elicitation',
      'Asks a question through an InputRequiredResult.',
      (_a, ctx) => {
        if (ctx.inputResponses?.answer !== undefined) return textResult('Thanks for answering.');
        return inputRequired({
          answer: formElicitation('Any comment?', {
            type: 'object',
            properties: { comment: { type: 'string' } },
          }),
        });
      },
    ),
    tool(
      'json_schema_2020_12_tool',
      'Tool with JSON Schema 2020-12 features',
      () => textResult('Schema accepted.'),
      JSON_SCHEMA_2020_12_INPUT as unknown as ToolDefinition['inputSchema'],
    ),
    tool(
      'test_header_param',
      'Echoes region, which travels in the Mcp-Param-Region header too.',
      (args) => textResult(`region=${String(args.region)}`),
      {
        type: 'object',
        properties: { region: { type: 'string', 'x-mcp-header': 'Region' } },
        required: ['region'],
      },
    ),
  ];
}
