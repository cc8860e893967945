import { request } from 'node:http';
import { DEFAULT_MAX_SKEW_SECONDS, DEFAULT_TTL_SECONDS } from '@mrtr/ticket';
import { expect } from 'vitest';
import type { RunningCombination } from '../combination.js';
import { type Person, withOfficialClient } from '../official-client.js';
import type { Scenario } from './types.js';

/**
 * How far back the clock goes to mint an expired ticket, milliseconds: past
 * the ticket lifetime and the tolerated skew, with a minute to spare.
 */
export const EXPIRED_OFFSET_MS = (DEFAULT_TTL_SECONDS + DEFAULT_MAX_SKEW_SECONDS + 60) * 1000;

/** Run `round` with both instances' clock `offsetMs` off, then put it back. */
export async function atOffset<T>(
  h: RunningCombination,
  offsetMs: number,
  round: () => Promise<T>,
): Promise<T> {
  h.clock.offsetMs = offsetMs;
  try {
    return await round();
  } finally {
    h.clock.offsetMs = 0;
  }
}

/** Refusals of a used nonce: already used, or still being carried out by another request. */
export const USED_OR_IN_PROGRESS = /already used|being carried out by another request/;

/**
 * Our own endpoint speaks 2026-07-28 only: the official client on its
 * 2025-era default cannot even connect (its `initialize` is answered
 * `-32022`, naming 2026-07-28 as the version supported), so `person` is
 * never asked.
 */
export async function refusesLegacyClient(h: RunningCombination, person: Person): Promise<void> {
  const outcome = await withOfficialClient(
    h.urls[0],
    h.principals.alice.token,
    person,
    async () => 'connected',
    'legacy',
  ).then(
    ({ value }) => value,
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(Error);
  expect(String(outcome)).toMatch(/"code":-32022/);
  expect(String(outcome)).toContain('2026-07-28');
}

/** POST `body` to `url` with `headers` as given (`Host` included, which `fetch` does not let a caller set). */
function postRaw(
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; text: string }> {
  const { hostname, port, pathname } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: hostname, port, path: pathname, method: 'POST', headers },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * The `rebinding` column, the same for every app: a page on another origin
 * that reaches the server through DNS rebinding sends a foreign `Host`, or
 * its `Origin`. Both are refused with 403 and a JSON-RPC error before
 * anything is read (MCP 2026-07-28, `basic/transports/streamable-http`,
 * "Security Warning"); the same request with the server's own `Host` and no
 * `Origin` is served, so the refusal is the headers' doing. `tools/list`
 * asks nothing and changes nothing.
 */
export const REBINDING: Scenario = {
  id: 'rebinding',
  async run(h) {
    const url = h.urls[0];
    const { host } = new URL(url);
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/list',
      params: {
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    });
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${h.principals.alice.token}`,
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/list',
    };
    const own = await postRaw(url, { ...headers, host }, body);
    expect(own.status).toBe(200);
    const foreigners: Record<string, string>[] = [
      { host: 'evil.example' },
      { host: `evil.example:${new URL(url).port}` },
      { host, origin: 'http://evil.example' },
      { host, origin: 'null' },
    ];
    for (const foreign of foreigners) {
      const refused = await postRaw(url, { ...headers, ...foreign }, body);
      expect([JSON.stringify(foreign), refused.status]).toEqual([JSON.stringify(foreign), 403]);
      expect(JSON.parse(refused.text).error.code).toBeTypeOf('number');
    }
  },
};
