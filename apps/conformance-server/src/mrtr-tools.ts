import { digestJson } from '@mrtr/digest';
import type { ConfirmationGate } from '@mrtr/gate';
import type { AnyToolDefinition, ToolCallContext, ToolDefinition } from '@mrtr/server';
import type { TicketSealer } from '@mrtr/ticket';
import {
  CreateMessageResultSchema,
  ElicitResultSchema,
  ErrorCode,
  field,
  formSchema,
  type InputRequest,
  type InputRequests,
  inputRequired,
  ListRootsResultSchema,
  McpError,
  textResult,
} from '@mrtr/wire';

/**
 * The Multi Round-Trip fixture tools of the `input-required-result-*`
 * scenarios (MCP 2026-07-28, `basic/patterns/mrtr`). State that spans rounds
 * travels only in a sealed `requestState` (`@mrtr/ticket`), so any instance
 * can serve any round; the confirmation-shaped ones go through `@mrtr/gate`.
 */

const noArgs = { type: 'object', properties: {} } as const;

/**
 * Longest text answer taken, UTF-16 code units: an answer is sealed into the
 * next round's `requestState`, which must stay within `maxTicketLength`
 * (a longer one is asked again, as an invalid answer is).
 */
const MAX_ANSWER_LENGTH = 200;

const askName = (message: string): InputRequest => ({
  method: 'elicitation/create',
  params: {
    message,
    requestedSchema: formSchema(
      { name: field.string({ title: 'Name', maxLength: MAX_ANSWER_LENGTH }) },
      { required: ['name'] },
    ),
  },
});
const askColor: InputRequest = {
  method: 'elicitation/create',
  params: {
    message: 'Step 2: What is your favorite color?',
    requestedSchema: formSchema(
      { color: field.string({ title: 'Color' }) },
      { required: ['color'] },
    ),
  },
};
const askCapital: InputRequest = {
  method: 'sampling/createMessage',
  params: {
    messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }],
    maxTokens: 100,
  },
};
const askGreeting: InputRequest = {
  method: 'sampling/createMessage',
  params: {
    messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }],
    maxTokens: 50,
  },
};
const askRoots: InputRequest = { method: 'roots/list', params: {} };

/** The accepted `content[field]` of an elicitation answer, if it is a string. */
function acceptedString(answer: unknown, name: string): string | undefined {
  const parsed = ElicitResultSchema.safeParse(answer);
  if (!parsed.success || parsed.data.action !== 'accept') return undefined;
  const value = parsed.data.content?.[name];
  return typeof value === 'string' && value.length <= MAX_ANSWER_LENGTH ? value : undefined;
}

function samplingText(answer: unknown): string | undefined {
  const parsed = CreateMessageResultSchema.safeParse(answer);
  if (!parsed.success) return undefined;
  const block = Array.isArray(parsed.data.content) ? parsed.data.content[0] : parsed.data.content;
  return block?.type === 'text' ? block.text : `[${block?.type ?? 'empty'} answer]`;
}

function rootUris(answer: unknown): string[] | undefined {
  const parsed = ListRootsResultSchema.safeParse(answer);
  return parsed.success ? parsed.data.roots.map((r) => r.uri) : undefined;
}

function tool(
  name: string,
  description: string,
  handler: (ctx: ToolCallContext) => ReturnType<ToolDefinition['handler']>,
): AnyToolDefinition {
  return { name, description, inputSchema: noArgs, handler: (_args, ctx) => handler(ctx) };
}

/** Seal and open per-tool state bound to the caller, the tool and its arguments. */
function stateCodec(sealer: TicketSealer) {
  const binding = (ctx: ToolCallContext) => ({
    sub: ctx.principal.id,
    op: `tools/call:${ctx.name}`,
    argsDigest: digestJson(ctx.arguments),
  });
  return {
    seal(ctx: ToolCallContext, phase: string, data: Record<string, string> = {}): string {
      return sealer.seal({ ...binding(ctx), inputKey: phase, phase, data }).ticket;
    },
    /** The sealed phase and data; a state that fails to open is refused (`-32602`), never trusted. */
    open(ctx: ToolCallContext): { phase: string; data: Record<string, string> } {
      const opened = sealer.open<Record<string, string>>(ctx.requestState ?? '', binding(ctx));
      if (!opened.ok)
        throw new McpError(ErrorCode.InvalidParams, `requestState rejected (${opened.reason})`);
      return { phase: opened.claims.phase, data: opened.claims.data ?? {} };
    },
  };
}

/** The fourteen scenarios' tools, on one gate and one sealer. */
export function mrtrTools(gate: ConfirmationGate, sealer: TicketSealer): AnyToolDefinition[] {
  const state = stateCodec(sealer);
  const confirmTool = (name: string, description: string) =>
    tool(name, description, (ctx) =>
      gate.run(ctx, {
        key: 'confirm',
        prepare: async () => ({ view: undefined }),
        question: (_sealed, notice) => ({
          message: notice ? `${notice} Please confirm` : 'Please confirm',
          requestedSchema: formSchema({ ok: field.boolean({ title: 'OK' }) }, { required: ['ok'] }),
        }),
        consents: (content) => content.ok === true,
        perform: async () => textResult('state-ok: the sealed requestState was verified.'),
      }),
    );

  return [
    tool('test_input_required_result_elicitation', 'Asks for a name, then greets.', (ctx) => {
      const name = acceptedString(ctx.inputResponses?.user_name, 'name');
      if (name !== undefined) return textResult(`Hello, ${name}!`);
      const answered = ElicitResultSchema.safeParse(ctx.inputResponses?.user_name);
      if (answered.success && answered.data.action !== 'accept')
        return textResult('No name was given.');
      // Missing, wrong key or malformed: ask again rather than fail (MRTR "Server Requirements").
      return inputRequired({ user_name: askName('What is your name?') });
    }),
    tool('test_input_required_result_sampling', 'Asks the client model a question.', (ctx) => {
      const text = samplingText(ctx.inputResponses?.capital_question);
      if (text !== undefined) return textResult(`The model answered: ${text}`);
      return inputRequired({ capital_question: askCapital });
    }),
    tool('test_input_required_result_list_roots', 'Asks the client for its roots.', (ctx) => {
      const roots = rootUris(ctx.inputResponses?.client_roots);
      if (roots !== undefined) return textResult(`Client roots: ${roots.join(', ') || '(none)'}`);
      return inputRequired({ client_roots: askRoots });
    }),
    confirmTool(
      'test_input_required_result_request_state',
      'Asks for confirmation; the answer is accepted only with the sealed requestState.',
    ),
    confirmTool(
      'test_input_required_result_tampered_state',
      'Asks for confirmation; a tampered requestState is rejected with -32602.',
    ),
    tool(
      'test_input_required_result_multiple_inputs',
      'Asks for a name, a greeting and the roots at once.',
      (ctx) => {
        const all: InputRequests = {
          user_name: askName('What is your name?'),
          greeting: askGreeting,
          client_roots: askRoots,
        };
        if (ctx.requestState === undefined) return inputRequired(all, state.seal(ctx, 'inputs'));
        const { phase } = state.open(ctx);
        if (phase !== 'inputs')
          throw new McpError(ErrorCode.InvalidParams, 'requestState of another step');
        const name = acceptedString(ctx.inputResponses?.user_name, 'name');
        const greeting = samplingText(ctx.inputResponses?.greeting);
        const roots = rootUris(ctx.inputResponses?.client_roots);
        const missing: InputRequests = {};
        if (name === undefined) missing.user_name = all.user_name as InputRequest;
        if (greeting === undefined) missing.greeting = askGreeting;
        if (roots === undefined) missing.client_roots = askRoots;
        if (Object.keys(missing).length > 0) return inputRequired(missing, ctx.requestState);
        return textResult(`${greeting} ${name}; roots: ${roots?.join(', ')}`);
      },
    ),
    tool('test_input_required_result_multi_round', 'Asks two questions in two rounds.', (ctx) => {
      if (ctx.requestState === undefined)
        return inputRequired(
          { step1: askName('Step 1: What is your name?') },
          state.seal(ctx, 'step1'),
        );
      const { phase, data } = state.open(ctx);
      if (phase === 'step1') {
        const name = acceptedString(ctx.inputResponses?.step1, 'name');
        if (name === undefined)
          return inputRequired({ step1: askName('Step 1: What is your name?') }, ctx.requestState);
        return inputRequired({ step2: askColor }, state.seal(ctx, 'step2', { name }));
      }
      const color = acceptedString(ctx.inputResponses?.step2, 'color');
      if (color === undefined) return inputRequired({ step2: askColor }, ctx.requestState);
      return textResult(`${data.name ?? 'Someone'} likes ${color}.`);
    }),
    tool(
      'test_input_required_result_capabilities',
      'Asks only through methods the client declared.',
      (ctx) => {
        const caps = ctx.capabilities ?? {};
        const requests: InputRequests = {};
        if (caps.elicitation !== undefined) requests.user_name = askName('What is your name?');
        if (caps.sampling !== undefined) requests.capital_question = askCapital;
        if (caps.roots !== undefined) requests.client_roots = askRoots;
        if (Object.keys(requests).length === 0) {
          throw new McpError(
            ErrorCode.MissingRequiredClientCapability,
            'This tool needs elicitation, sampling or roots',
            { requiredCapabilities: { sampling: {} } },
          );
        }
        const answered = Object.keys(requests).some((k) => ctx.inputResponses?.[k] !== undefined);
        return answered ? textResult('Thanks for the input.') : inputRequired(requests);
      },
    ),
  ];
}
