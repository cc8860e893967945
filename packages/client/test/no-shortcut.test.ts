/**
 * No code path answers on a person's behalf. The real guard is structural:
 * answers come only from the caller's answerer. These tests pin that down.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import * as api from '../src/index.js';
import { confirmSchema, done, formRequest, scriptedServer } from './helpers.js';

const SRC = join(import.meta.dirname, '../src');
const sources = readdirSync(SRC)
  .filter((f) => f.endsWith('.ts'))
  .map((f) => ({ file: f, text: readFileSync(join(SRC, f), 'utf8') }));

const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('no answering on a person’s behalf', () => {
  it('never writes an accept itself: every accept sent is the answerer’s own action', () => {
    for (const { file, text } of sources) {
      // Object literals such as {action: 'accept'} or {"action":"accept"} would be a made-up
      // consent (type declarations, `{ action: 'accept'; … }`, end in a semicolon and pass).
      expect(text, file).not.toMatch(/['"`]?action['"`]?\s*:\s*['"`]accept['"`]\s*[,}]/);
    }
  });

  it('exports no helper that approves, confirms or answers for someone', () => {
    const names = Object.keys(api);
    expect(
      names.filter((n) =>
        /auto.?(accept|approve|confirm|answer)|approve|answerFor|elicit/i.test(n),
      ),
    ).toEqual([]);
  });

  it('sends no accept when the answerer never accepts, whatever the server asks', async () => {
    const s = await scriptedServer((_b, n) =>
      n < 3
        ? {
            result: {
              resultType: 'input_required',
              inputRequests: {
                form: formRequest(confirmSchema),
                url: {
                  method: 'elicitation/create',
                  params: { mode: 'url', message: 'go', url: 'https://x.example/' },
                },
                nested: formRequest({ type: 'object', properties: { a: { type: 'object' } } }),
              },
              requestState: 'again',
            },
          }
        : done(),
    );
    servers.push(s);
    const opened: string[] = [];
    const answerer: api.Answerer = {
      form: async () => ({ action: 'decline' }),
      url: { ask: async () => ({ action: 'cancel' }), open: (u) => void opened.push(u) },
    };
    await new api.McpClient({ url: s.url, answerer }).callTool('t');
    expect(s.requests.length).toBe(4);
    expect(s.requests.map((r) => r.raw).join()).not.toMatch(/"accept"/);
    expect(opened).toEqual([]);
  });
});
