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
import { assertValidMessage } from '@mrtr/spec-schema';

/** Stands in for the person: answers each `elicitation/create` form. */
export type Person = (params: {
  message: string;
  requestedSchema: { properties: Record<string, { enum?: string[] }> };
}) => ElicitResult;

/** What went over the wire: messages checked, and every violation found. */
export interface WireLog {
  checked: number;
  violations: string[];
  /** Methods of the requests sent, in order. */
  methods: string[];
}

function messagesIn(text: string, contentType: string): unknown[] {
  if (!/text\/event-stream/i.test(contentType)) return [JSON.parse(text)];
  return text
    .split(/\r?\n\r?\n/)
    .map((block) =>
      block
        .split(/\r?\n/)
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n'),
    )
    .filter(Boolean)
    .map((data) => JSON.parse(data));
}

/** A `fetch` that validates each message it carries and records the outcome in `log`. */
function validatingFetch(log: WireLog): typeof fetch {
  const check = (message: unknown, method?: string) => {
    try {
      assertValidMessage(message, method ? { method } : {});
    } catch (error) {
      log.violations.push(String(error));
    }
    log.checked++;
  };
  return async (input, init) => {
    let method: string | undefined;
    if (init?.body !== undefined && init.body !== null) {
      if (typeof init.body !== 'string') {
        log.violations.push(`request body of type ${typeof init.body} could not be read`);
      } else {
        const message = JSON.parse(init.body) as { method?: string };
        method = message.method;
        if (method) log.methods.push(method);
        check(message);
      }
    }
    const response = await fetch(input, init);
    const text = await response.clone().text();
    if (text) {
      try {
        for (const m of messagesIn(text, response.headers.get('content-type') ?? ''))
          check(m, method);
      } catch (error) {
        log.violations.push(
          `response to ${method ?? 'a request'} is not JSON-RPC: ${String(error)}`,
        );
      }
    }
    return response;
  };
}

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
