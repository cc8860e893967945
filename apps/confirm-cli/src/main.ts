#!/usr/bin/env node
/**
 * mrtr: call MCP 2026-07-28 tools from a terminal, with the person at the
 * keyboard answering every question the server asks.
 *
 * @example
 * ```sh
 * export MRTR_TOKEN=…   # printed by the notes server at start
 * mrtr tools http://127.0.0.1:3000/mcp
 * mrtr call http://127.0.0.1:3000/mcp notes_delete --arg workspaceUri=notes://team --arg "title=Meeting notes"
 * mrtr receipt verify eyJhbGciOiJFZERTQSIs… --jwks http://127.0.0.1:3001/.well-known/jwks.json
 * mrtr receipt verify eyJhbGciOiJFZERTQSIs… --jwks ./archived-jwks.json --at 2026-11-30T12:00:00Z
 * mrtr receipt verify eyJhbGciOiJFZERTQSIs… --jwks ./jwks.json --operation tools/call:delete_service --arguments '{"serviceId":"svc_8f21c"}'
 * ```
 *
 * Exit codes: 0 a result that is not an error, or a receipt that verifies;
 * 1 a result with `isError`, or a receipt refused; 2 a usage, transport,
 * protocol or JSON-RPC error, or keys that could not be fetched; 130 the
 * person cancelled a question with Ctrl-C or Esc (Cancel chosen in the menu
 * is an answer: the code is then the result's).
 */
import { createRequire } from 'node:module';
import { cancel, log } from '@clack/prompts';
import { type Answerer, type ClientEvent, McpClient } from '@mrtr/client';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { parseArgs, parseDecimal, UsageError } from './args.js';
import { bounded, MAX_DESCRIPTION_COLUMNS, shownMessage } from './display.js';
import { explain, resultLines, toolListing } from './output.js';
import { terminalAnswerer } from './prompter.js';
import { type ReceiptVerifyOptions, verifyReceiptCommand } from './receipt.js';

/** This package's version: `package.json` sits one folder up from both `src/` and `dist/`. */
const VERSION = (createRequire(import.meta.url)('../package.json') as { version: string }).version;

interface Common {
  token?: string;
}

function headersFor(options: Common): Record<string, string> {
  const token = options.token ?? process.env.MRTR_TOKEN;
  return token ? { Authorization: `Bearer ${token}` } : {};
}

function seconds(value: string): number {
  const n = parseDecimal(value, 'number');
  if (n === undefined || n <= 0)
    throw new InvalidArgumentError('must be a positive number of seconds');
  return n;
}

type ElicitationMode = 'form' | 'url';

/** `--elicitation`: `form`, `url` or both, comma-separated; each at most once. */
function elicitationModes(value: string): ElicitationMode[] {
  const modes = value.split(',').map((m) => m.trim());
  if (modes.some((m) => m !== 'form' && m !== 'url') || new Set(modes).size !== modes.length)
    throw new InvalidArgumentError('must be form, url, or form,url');
  return modes as ElicitationMode[];
}

/** `answerer` with only the modes to declare: the client declares the modes its answerer has. */
function onlyModes(answerer: Answerer, modes: ElicitationMode[]): Answerer {
  return {
    ...(modes.includes('form') && answerer.form ? { form: answerer.form } : {}),
    ...(modes.includes('url') && answerer.url ? { url: answerer.url } : {}),
  };
}

/** Auto-declines of one round told in full; past this many, one line says the rest were declined too. */
const DECLINES_SHOWN_PER_ROUND = 5;

/**
 * What tells the person what the client did on its own: every decline it
 * made (the first {@link DECLINES_SHOWN_PER_ROUND} of a round in full, the
 * server's message bounded by {@link shownMessage}), every timeout, every retry,
 * and a URL question cancelled after consent (`open-failed`: the person left
 * the "Continue" prompt without continuing).
 */
function reporter(): (event: ClientEvent) => void {
  const declined = new Map<number, number>();
  return (event) => {
    if (event.type === 'auto-declined') {
      const count = (declined.get(event.round) ?? 0) + 1;
      declined.set(event.round, count);
      if (count > DECLINES_SHOWN_PER_ROUND) {
        if (count === DECLINES_SHOWN_PER_ROUND + 1)
          log.warn('More questions of this round were declined without asking you; not shown.');
        return;
      }
      const asked = event.message === undefined ? '' : `\n${shownMessage(event.message)}\n`;
      log.warn(
        `The server sent a question this terminal cannot show faithfully (${bounded(event.request.method)} ${bounded(event.request.target)}); it was declined without asking you:${asked}\n${event.reasons.map((r) => bounded(r, MAX_DESCRIPTION_COLUMNS)).join('\n')}`,
      );
    } else if (event.type === 'timed-out') {
      log.warn(
        `No answer within ${Math.round(event.afterMs / 1000)} s: the question was cancelled, and a later answer is not sent.`,
      );
    } else if (event.type === 'open-failed') {
      // The client answers `cancel` when `open` throws; the reason is the prompter's own words.
      cancel(
        `Cancelled: ${bounded(event.reason, MAX_DESCRIPTION_COLUMNS)}. The server is told you dismissed the question.`,
      );
    } else if (event.type === 'invalid-answer') {
      log.warn('That answer was not valid and was not sent; please answer again.');
    } else if (event.type === 'retried') {
      log.info(
        `Sent ${bounded(event.method)} again: ${bounded(event.detail, MAX_DESCRIPTION_COLUMNS)}.`,
      );
    }
  };
}

async function tools(url: string, options: Common): Promise<number> {
  const client = new McpClient({
    url,
    headers: headersFor(options),
    clientInfo: { name: 'mrtr', version: VERSION },
  });
  await client.discover();
  const list = await client.listTools();
  console.log(toolListing(client.server, list).join('\n'));
  return 0;
}

async function call(
  url: string,
  name: string,
  options: Common & { arg: string[]; timeout: number; elicitation: ElicitationMode[] },
): Promise<number> {
  const { answerer, state } = terminalAnswerer();
  const client = new McpClient({
    url,
    headers: headersFor(options),
    clientInfo: { name: 'mrtr', version: VERSION },
    answerer: onlyModes(answerer, options.elicitation),
    answerTimeoutMs: options.timeout * 1000,
    onEvent: reporter(),
  });
  await client.discover();
  const { tools } = await client.listTools();
  const tool = tools.find((t) => t.name === name);
  if (!tool)
    throw new UsageError(
      `${client.server.url} lists no tool named "${bounded(name)}" (see: mrtr tools ${url})`,
    );
  const args = parseArgs(options.arg, tool);
  const { result } = await client.callTool(name, args, { tool });
  console.log(resultLines(result).join('\n'));
  if (state.personCancelled) return 130;
  return result.isError ? 1 : 0;
}

const program = new Command()
  .name('mrtr')
  .description(
    'Call MCP 2026-07-28 tools from a terminal; you answer every question the server asks.',
  )
  .version(VERSION)
  .showHelpAfterError()
  // Commander exits 1 on a usage error, the code of a refused receipt or an isError result: throw instead (below).
  .exitOverride();

program
  .command('tools')
  .description('list the tools of an MCP server')
  .argument('<url>', 'MCP endpoint, e.g. http://127.0.0.1:3000/mcp')
  .option('--token <token>', 'bearer token (default: $MRTR_TOKEN)')
  .action(async (url: string, options: Common) => {
    process.exitCode = await tools(url, options);
  });

program
  .command('call')
  .description('call a tool and answer its questions')
  .argument('<url>', 'MCP endpoint, e.g. http://127.0.0.1:3000/mcp')
  .argument('<tool>', 'tool name')
  .option(
    '--arg <key=value>',
    'a tool argument (repeat for more)',
    (v: string, all: string[]) => [...all, v],
    [],
  )
  .option('--token <token>', 'bearer token (default: $MRTR_TOKEN)')
  .option('--timeout <seconds>', 'cancel a question left unanswered this long', seconds, 120)
  .option(
    '--elicitation <modes>',
    "the elicitation modes to declare: form, url, or form,url; with url alone a tool that allows it sends its server's approval page instead of a form",
    elicitationModes,
    ['form', 'url'] as ElicitationMode[],
  )
  .action(
    async (
      url: string,
      name: string,
      options: Common & { arg: string[]; timeout: number; elicitation: ElicitationMode[] },
    ) => {
      process.exitCode = await call(url, name, options);
    },
  );

/** All of stdin, for a receipt given as `-`. */
/** Most bytes `receipt verify -` reads from stdin: a receipt is at most 8,192 characters, with a line break or two. */
const MAX_STDIN_BYTES = 16 * 1024;

/**
 * The receipt on stdin, read up to {@link MAX_STDIN_BYTES}.
 * @throws {UsageError} past that, without reading the rest (endless input would fill memory).
 */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of process.stdin) {
    length += (chunk as Buffer).length;
    if (length > MAX_STDIN_BYTES) {
      process.stdin.destroy();
      throw new UsageError(
        `the receipt on stdin is longer than ${MAX_STDIN_BYTES} bytes: a receipt is at most 8192 characters`,
      );
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

program
  .command('receipt')
  .description('signed approval receipts')
  .command('verify')
  .description(
    "verify an approval receipt with the issuer's published keys, and say what it proves",
  )
  .argument('<receipt>', 'the receipt (a compact JWS), or - to read it from stdin')
  .requiredOption(
    '--jwks <url-or-file>',
    "the issuer's JWKS: an http(s) URL, e.g. http://127.0.0.1:3001/.well-known/jwks.json, or a file holding one (a path or a file:// URL), e.g. the set archived for an old receipt",
  )
  .option('--issuer <iss>', 'refuse a receipt of another issuer')
  .option(
    '--at <time>',
    'verify as of this ISO 8601 time, e.g. its audit record, not now (a receipt lives only minutes)',
  )
  .option(
    '--operation <op>',
    'with --arguments: the operation it must approve, e.g. tools/call:delete_service',
  )
  .option(
    '--arguments <json>',
    'with --operation: the arguments it must approve, as JSON or @file (their RFC 8785 digest is compared)',
  )
  .option('--content <json>', 'the answer it must approve, as JSON or @file')
  .option('--principal <id>', 'the principal who must have approved')
  .option('--min-level <level>', 'the weakest confirmation accepted: form, url or passkey')
  .action(async (receipt: string, options: ReceiptVerifyOptions) => {
    const verdict = await verifyReceiptCommand(
      receipt === '-' ? await readStdin() : receipt,
      options,
    );
    if (verdict.exitCode === 0) console.log(verdict.lines.join('\n'));
    else console.error(`mrtr: ${verdict.lines.join('\n')}`);
    process.exitCode = verdict.exitCode;
  });

// A reader that closed the pipe early (`mrtr --help | true`) is not an error of mrtr: without this,
// the EPIPE of a write that commander or console made became an uncaught exception and exit 1.
for (const stream of [process.stdout, process.stderr])
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });

program.parseAsync().catch((error: unknown) => {
  if (error instanceof CommanderError) {
    // Commander has printed the message (or the help, or the version) itself. A usage error is 2.
    process.exitCode = error.exitCode === 0 ? 0 : 2;
    return;
  }
  console.error(`mrtr: ${explain(error, process.stdin.isTTY === true)}`);
  process.exitCode = 2;
});
