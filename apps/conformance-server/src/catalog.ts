import type {
  PromptDefinition,
  ResourceDefinition,
  ResourceTemplateDefinition,
} from '@mrtr/server';
import type { CompleteRequestParams, CompleteResult, GetPromptResult } from '@mrtr/wire';
import {
  ElicitResultSchema,
  ErrorCode,
  field,
  formElicitation,
  formSchema,
  inputRequired,
  McpError,
} from '@mrtr/wire';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { RED_PIXEL_PNG } from './media.js';

/** The prompts, resources and completions of the conformance server scenarios. */

/**
 * Whether a value is a URI as schema.json's `format: uri` reads it (RFC 3986,
 * ajv-formats' full check, as the tests validate our output): `URL.canParse`
 * lets through spaces, controls, `<`, a second `#` and brackets outside an IP
 * literal, which that format refuses.
 */
const isUri = (() => {
  // ajv-formats is CommonJS: under NodeNext its default export arrives as the module object.
  const addFormats = ((addFormatsModule as { default?: unknown }).default ??
    addFormatsModule) as typeof import('ajv-formats').default;
  const validate = addFormats(new Ajv()).compile({ type: 'string', format: 'uri' });
  return (value: unknown): value is string => validate(value) === true;
})();
/^[A-Za-z][A-Za-z0-9+.-]*:(?:[A-Za-z0-9._~:/?#[\]@!$&'()*+,;=-]|%[0-9A-Fa-f]{2})*$/;

const complete = (messages: GetPromptResult['messages']): GetPromptResult => ({
  resultType: 'complete',
  messages,
});

/** `prompts-*` and `input-required-result-non-tool-request`. */
export const prompts: PromptDefinition[] = [
  {
    name: 'test_simple_prompt',
    description: 'A prompt without arguments.',
    handler: () =>
      complete([
        { role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } },
      ]),
  },
  {
    name: 'test_prompt_with_arguments',
    description: 'A prompt that substitutes two arguments.',
    arguments: [
      { name: 'arg1', description: 'First test argument', required: true },
      { name: 'arg2', description: 'Second test argument', required: true },
    ],
    handler: (args) =>
      complete([
        {
          role: 'user',
          content: {
            type: 'text',
            text: `Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'`,
          },
        },
      ]),
  },
  {
    name: 'test_prompt_with_embedded_resource',
    description: 'A prompt that embeds the resource it is given.',
    arguments: [
      { name: 'resourceUri', description: 'URI of the resource to embed', required: true },
    ],
    handler: (args) => {
      // Echoed as an embedded resource's `uri`, which schema.json says is a URI (RFC 3986).
      if (!isUri(args.resourceUri))
        throw new McpError(ErrorCode.InvalidParams, 'resourceUri must be a URI, such as test://a', {
          argument: 'resourceUri',
        });
      return complete([
        {
          role: 'user',
          content: {
            type: 'resource',
            resource: {
              uri: args.resourceUri,
              mimeType: 'text/plain',
              text: 'Embedded resource content for testing.',
            },
          },
        },
        {
          role: 'user',
          content: { type: 'text', text: 'Please process the embedded resource above.' },
        },
      ]);
    },
  },
  {
    name: 'test_prompt_with_image',
    description: 'A prompt with an image.',
    handler: () =>
      complete([
        { role: 'user', content: { type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' } },
        { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
      ]),
  },
  {
    name: 'test_input_required_result_prompt',
    description: 'A prompt that first asks the person for its context.',
    handler: (_args, ctx) => {
      const answer = ElicitResultSchema.safeParse(ctx.inputResponses?.user_context);
      const context = answer.success ? answer.data.content?.context : undefined;
      if (answer.success && answer.data.action === 'accept' && typeof context === 'string') {
        return complete([
          { role: 'user', content: { type: 'text', text: `Use this context: ${context}` } },
        ]);
      }
      return inputRequired({
        user_context: formElicitation(
          'What context should the prompt use?',
          formSchema({ context: field.string() }, { required: ['context'] }),
        ),
      });
    },
  },
];

/** `resources-*` and `caching`. */
export const resources: ResourceDefinition[] = [
  {
    uri: 'test://static-text',
    name: 'static-text',
    description: 'A static text resource.',
    mimeType: 'text/plain',
    read: () => ({
      resultType: 'complete',
      contents: [
        {
          uri: 'test://static-text',
          mimeType: 'text/plain',
          text: 'This is the content of the static text resource.',
        },
      ],
    }),
  },
  {
    uri: 'test://static-binary',
    name: 'static-binary',
    description: 'A static binary resource (a PNG).',
    mimeType: 'image/png',
    read: () => ({
      resultType: 'complete',
      contents: [{ uri: 'test://static-binary', mimeType: 'image/png', blob: RED_PIXEL_PNG }],
    }),
  },
];

/** `resources-templates-read`. */
export const resourceTemplates: ResourceTemplateDefinition[] = [
  {
    uriTemplate: 'test://template/{id}/data',
    name: 'template-data',
    description: 'JSON data for any id.',
    mimeType: 'application/json',
    read: ({ id }) => ({
      resultType: 'complete',
      contents: [
        {
          uri: `test://template/${encodeURIComponent(id as string)}/data`,
          mimeType: 'application/json',
          text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }),
        },
      ],
    }),
  },
];

const SUGGESTIONS: Record<string, string[]> = {
  arg1: ['paris', 'park', 'party', 'test', 'testValue1'],
  arg2: ['world', 'testValue2'],
};

/** `completion-complete`: prefix matches among a few fixed values. */
export function completeArgument(params: CompleteRequestParams): CompleteResult {
  const pool = SUGGESTIONS[params.argument.name] ?? [];
  const values = pool.filter((v) => v.startsWith(params.argument.value));
  return { resultType: 'complete', completion: { values, total: values.length, hasMore: false } };
}
