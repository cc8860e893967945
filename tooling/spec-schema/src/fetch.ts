/**
 * A `fetch` for test clients that checks every message on the wire against
 * the official schema.json: each request body before it leaves, each
 * response body (JSON, or every `data:` event of a stream) as it arrives.
 * Violations are recorded, not thrown, so the client under test behaves as it
 * would; a test then asserts `log.violations` is empty.
 */
import { assertValidMessage } from './index.js';

/** What went over the wire: messages checked, and every violation found. */
export interface WireLog {
  checked: number;
  violations: string[];
  /** Methods of the requests sent, in order. */
  methods: string[];
}

/** The JSON-RPC messages of a response body: one JSON value, or every `data:` event of an SSE stream. */
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

/**
 * A `fetch` that validates each message it carries and records the outcome in `log`.
 * @param log where checked counts, request methods and violations go
 * @param inner the `fetch` to call (default: the global one)
 */
export function validatingFetch(log: WireLog, inner: typeof fetch = fetch): typeof fetch {
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
    const response = await inner(input, init);
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

/** A fresh, empty {@link WireLog}. */
export function wireLog(): WireLog {
  return { checked: 0, violations: [], methods: [] };
}
