/**
 * A notes_delete confirmation from start to end, over real HTTP, with the official
 * client (`@modelcontextprotocol/client`, protocol 2026-07-28).
 *
 * It shows:
 * - a notes server started in this process (in-memory PGlite, one token, a random secret);
 * - every JSON-RPC message on the wire: each POST body and each response body
 *   (`requestState` is shortened to its first 24 characters);
 * - round 1 of `tools/call notes_delete`: the server does not delete anything; it answers
 *   `input_required` with a form (which "Meeting notes"? and "confirm").
 * - the client's `elicitation/create` handler, which stands in for the person: it prints the
 *   form, chooses the first note offered and confirms;
 * - round 2: the client re-sends the call by itself, with the answer in `inputResponses` and
 *   the `requestState` echoed back. The server then deletes the note and answers `complete`;
 * - `notes_list` afterwards: one "Meeting notes" fewer;
 * - the audit trail of the operation: the JSON lines the server wrote (one per record, tied
 *   together by the ticket nonce) and the same records as rows of table `mrtr_audit`, whose
 *   `completed` row was committed in the transaction that claimed the nonce and deleted the note.
 *
 * Run it with `pnpm demo` from the repository root.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { JsonLinesAuditSink } from '@mrtr/audit';
import { readAuditRecords } from '@mrtr/audit-postgres';
import { fieldOptions } from '@mrtr/wire';
import { randomSecret, startNotesServer } from './app.js';
import { openDatabase } from './db.js';

const TOKEN = 'demo-token';
const WORKSPACE = 'notes://team';

/** JSON with `requestState` values shortened: they are long, opaque, signed tickets. */
function show(value: unknown, space?: number): string {
  return JSON.stringify(
    value,
    (key, v) => (key === 'requestState' && typeof v === 'string' ? `${v.slice(0, 24)}…` : v),
    space,
  );
}

function indent(text: string, prefix = '    '): string {
  return text.replace(/^/gm, prefix);
}

/** A `fetch` that prints each request body and each response body, then passes them on unchanged. */
async function loggingFetch(url: string | URL, init?: RequestInit): Promise<Response> {
  const method = new Headers(init?.headers).get('mcp-method') ?? '';
  if (typeof init?.body === 'string') {
    console.log(`\n  → POST ${new URL(url).pathname}  (Mcp-Method: ${method})`);
    console.log(indent(show(JSON.parse(init.body))));
  }
  const response = await fetch(url, init);
  const text = await response.clone().text();
  console.log(`  ← ${response.status} ${response.headers.get('content-type') ?? ''}`);
  if (text) {
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: print it as it came
    }
    console.log(indent(typeof body === 'string' ? body : show(body)));
  }
  return response;
}

function step(title: string): void {
  console.log(`\n=== ${title} ${'='.repeat(Math.max(3, 72 - title.length))}`);
}

async function main(): Promise<void> {
  const db = await openDatabase('memory://');
  // The audit trail the server writes: kept here to be shown at the end (the app's main writes
  // it to stdout or MRTR_AUDIT_FILE), and in table mrtr_audit of the notes database.
  const trail: string[] = [];
  const server = await startNotesServer({
    db,
    tokens: new Map([[TOKEN, 'demo']]),
    secret: randomSecret(),
    port: 0,
    audit: new JsonLinesAuditSink({ destination: { write: (line) => trail.push(line) } }),
    auditTable: true,
  });
  console.log(`notes server listening on ${server.url} (${db.description})`);

  const client = new Client(
    { name: 'mrtr-notes-demo', version: '0.1.0' },
    {
      // Form elicitation is what notes_delete needs; without it the server answers -32021.
      capabilities: { elicitation: { form: {} } },
      // Speak protocol 2026-07-28 (server/discover, MRTR). The default is the legacy handshake.
      versionNegotiation: { mode: { pin: '2026-07-28' } },
    },
  );

  // The person. The client calls this once per input request, then retries the tool call.
  client.setRequestHandler('elicitation/create', async (request) => {
    const params = request.params as {
      message: string;
      requestedSchema: { properties: { note_id?: { enum?: string[] } } };
    };
    console.log('\n  [person] the form, as received:');
    console.log(indent(params.message, '    | '));
    console.log(indent(`requestedSchema: ${show(params.requestedSchema, 2)}`));
    const noteId = fieldOptions(params.requestedSchema.properties.note_id)[0];
    if (noteId === undefined) {
      console.log('  [person] no note to choose: declining');
      return { action: 'decline' };
    }
    const answer = { action: 'accept' as const, content: { note_id: noteId, confirm: true } };
    console.log(`  [person] answers: ${JSON.stringify(answer)}`);
    return answer;
  });

  const transport = new StreamableHTTPClientTransport(new URL(server.url), {
    requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
    fetch: loggingFetch,
  });

  try {
    step('connect (server/discover)');
    await client.connect(transport);

    step('list tools');
    const { tools } = await client.listTools();
    console.log(`\n  tools: ${tools.map((t) => t.name).join(', ')}`);

    step(`call notes_delete {workspaceUri: '${WORKSPACE}', title: 'Meeting notes'}`);
    console.log('  (round 1 → input_required with a form; round 2 → complete)');
    const result = await client.callTool({
      name: 'notes_delete',
      arguments: { workspaceUri: WORKSPACE, title: 'Meeting notes' },
    });
    console.log('\n  final result:');
    console.log(indent(show(result, 2)));

    step('list the notes left');
    const listed = await client.callTool({
      name: 'notes_list',
      arguments: { workspaceUri: WORKSPACE },
    });
    const notes = (listed.structuredContent as { notes: { id: string; title: string }[] }).notes;
    console.log(`\n  ${notes.length} notes left in ${WORKSPACE}:`);
    for (const note of notes) console.log(`    ${note.id}  ${note.title}`);

    step('the audit trail of the operation');
    const records = trail.map((line) => JSON.parse(line) as { nonce?: string; outcome: string });
    const nonce = records.find((r) => r.outcome === 'completed')?.nonce;
    console.log(
      `\n  JSON lines written by the server for ticket nonce ${nonce} (one line each; indented here):`,
    );
    for (const line of trail) console.log(indent(show(JSON.parse(line), 2)));
    console.log('\n  the same records in table mrtr_audit:');
    const rows = nonce ? await readAuditRecords(db, { nonce }) : [];
    for (const r of rows)
      console.log(
        `    ${new Date(r.at).toISOString()}  ${r.outcome.padEnd(9)}  ${r.principal}  ${r.client?.name ?? '?'}  ${r.answer ? JSON.stringify(r.answer) : ''}`,
      );
  } finally {
    await client.close();
    await server.close();
    await db.close();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error('demo failed:', error);
    process.exit(1);
  },
);
