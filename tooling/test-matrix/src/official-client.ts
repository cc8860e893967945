/**
 * The official MCP client (`@modelcontextprotocol/client` 2.4.0). On
 * 2026-07-28 (pinned) it runs over a `fetch` that checks every message on the
 * wire against the official schema.json: each request body before it leaves,
 * each response body (JSON or every `data:` event of a stream) as it
 * arrives. On the 2025-era default (`versionNegotiation` legacy) the messages
 * are 2025-11-25 ones, which that schema does not describe, and a question
 * arrives on a stream that stays open until it is answered: only the methods
 * sent are logged.
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

/** The protocol era the official client speaks: 2026-07-28, or the 2025-era default. */
export type Era = 'modern' | 'legacy';

/** A `fetch` that logs the method of each request it sends, checking nothing. */
function methodLoggingFetch(wire: WireLog): typeof fetch {
  return async (input, init) => {
    if (typeof init?.body === 'string') {
      const { method } = JSON.parse(init.body) as { method?: string };
      if (method) wire.methods.push(method);
    }
    return fetch(input, init);
  };
}

/**
 * Connect the official client to `url` as the holder of `token`, declaring
 * form elicitation and answering each form with `person`; run `use`; close.
 * @param era `modern` pins 2026-07-28; `legacy` is the client's default negotiation (2025-11-25)
 * @returns what `use` returned and the wire log (check `violations` is empty)
 * @throws what connecting throws (a server that refuses the era)
 */
export async function withOfficialClient<T>(
  url: string,
  token: string,
  person: Person,
  use: (client: Client) => Promise<T>,
  era: Era = 'modern',
): Promise<{ value: T; wire: WireLog }> {
  const wire: WireLog = { checked: 0, violations: [], methods: [] };
  const client = new Client(
    { name: 'mrtr-test-matrix', version: '0.0.0' },
    {
      capabilities: { elicitation: { form: {} } },
      ...(era === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {}),
    },
  );
  client.setRequestHandler('elicitation/create', async (request) =>
    person(request.params as Parameters<Person>[0]),
  );
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
    fetch: era === 'modern' ? validatingFetch(wire) : methodLoggingFetch(wire),
  });
  await client.connect(transport);
  try {
    return { value: await use(client), wire };
  } finally {
    await client.close();
  }
}
