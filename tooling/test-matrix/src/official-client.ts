/**
 * The official MCP client (`@modelcontextprotocol/client` 2.4.0, pinned to
 * protocol 2026-07-28) over a `fetch` that checks every message on the wire
 * against the official schema.json: each request body before it leaves,
 * each response body (JSON or every `data:` event of a stream) as it arrives.
 */
import {
  Client,
  type ElicitResult,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { validatingFetch, type WireLog } from '@mrtr/spec-schema';

export type { WireLog };

/** Stands in for the person: answers each `elicitation/create` form. */
export type Person = (params: {
  message: string;
  requestedSchema: { properties: Record<string, { enum?: string[] }> };
}) => ElicitResult;

/**
 * Connect the official client to `url` as the holder of `token`, declaring
 * form elicitation and answering each form with `person`; run `use`; close.
 * @returns what `use` returned and the wire log (check `violations` is empty)
 */
export async function withOfficialClient<T>(
  url: string,
  token: string,
  person: Person,
  use: (client: Client) => Promise<T>,
): Promise<{ value: T; wire: WireLog }> {
  const wire: WireLog = { checked: 0, violations: [], methods: [] };
  const client = new Client(
    { name: 'mrtr-test-matrix', version: '0.0.0' },
    {
      capabilities: { elicitation: { form: {} } },
      versionNegotiation: { mode: { pin: '2026-07-28' } },
    },
  );
  client.setRequestHandler('elicitation/create', async (request) =>
    person(request.params as Parameters<Person>[0]),
  );
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
    fetch: validatingFetch(wire),
  });
  await client.connect(transport);
  try {
    return { value: await use(client), wire };
  } finally {
    await client.close();
  }
}
