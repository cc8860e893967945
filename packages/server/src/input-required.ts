import {
  type ClientCapabilities,
  ErrorCode,
  type InputRequiredResult,
  InputRequiredResultSchema,
  isCommonInputRequiredResult,
  McpError,
  supportsFormElicitation,
  supportsUrlElicitation,
} from '@mrtr/wire';

/** The requests that may answer with an `InputRequiredResult` (`basic/patterns/mrtr`). */
export const MRTR_METHODS: ReadonlySet<string> = new Set([
  'tools/call',
  'prompts/get',
  'resources/read',
]);

/**
 * Refuse an `InputRequiredResult` the endpoint must not send: one that is
 * malformed or carries neither `inputRequests` nor `requestState` (a server
 * bug: `-32603`), or that embeds a request this client did not declare
 * (MRTR "Server Requirements"; `-32021` with `data.requiredCapabilities`).
 * @throws {McpError} as described.
 */
export function checkInputRequired(
  result: InputRequiredResult,
  caps: ClientCapabilities | undefined,
): void {
  // The in-place check answers for the usual result (form questions) without zod's copy; any other goes to the schema.
  if (
    !isCommonInputRequiredResult(result) &&
    !InputRequiredResultSchema.safeParse(result).success
  ) {
    throw new McpError(
      ErrorCode.InternalError,
      'input_required result is malformed or has neither inputRequests nor requestState',
    );
  }
  for (const request of Object.values(result.inputRequests ?? {})) {
    if (request.method === 'elicitation/create') {
      const url = request.params.mode === 'url';
      const ok = url ? supportsUrlElicitation(caps) : supportsFormElicitation(caps);
      if (!ok) {
        const required = url ? { elicitation: { url: {} } } : { elicitation: { form: {} } };
        throw new McpError(
          ErrorCode.MissingRequiredClientCapability,
          `This request needs ${url ? 'URL' : 'form'} elicitation, which the client did not declare`,
          { requiredCapabilities: required },
        );
      }
    } else if (request.method === 'sampling/createMessage' && caps?.sampling === undefined) {
      throw new McpError(ErrorCode.MissingRequiredClientCapability, 'This request needs sampling', {
        requiredCapabilities: { sampling: {} },
      });
    } else if (request.method === 'roots/list' && caps?.roots === undefined) {
      throw new McpError(ErrorCode.MissingRequiredClientCapability, 'This request needs roots', {
        requiredCapabilities: { roots: {} },
      });
    }
  }
}
