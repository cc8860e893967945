/**
 * The README's smallest server (`examples/smallest-server.ts`), run as
 * written: started with its environment, asked over HTTP, answered, and a
 * second deletion of the same "yes" refused. Without `MRTR_SECRET` it must
 * not start at all (no known fallback secret).
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { describe, expect, it, vi } from 'vitest';

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
};
const TOKEN = randomBytes(16).toString('hex');
let url: string;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
    probe.on('error', reject);
  });
}

async function callTool(params: Record<string, unknown>, token = TOKEN) {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'delete_record',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'delete_record', _meta: META, ...params },
    }),
  });
  return { status: response.status, body: await response.json() };
}

async function waitForServer() {
  for (let i = 0; i < 100; i++) {
    try {
      await fetch(url, { method: 'POST' });
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`the smallest server did not listen on ${url}`);
}

describe("the gate README's smallest server, run as written", () => {
  it('refuses to start without MRTR_SECRET (no known fallback secret)', async () => {
    delete process.env.MRTR_SECRET;
    vi.resetModules();
    await expect(import('../examples/smallest-server.js')).rejects.toThrow(
      /secret for key k1 is 0 bytes/,
    );
  });

  it('asks, deletes on a confirmed answer, and a replayed "yes" deletes nothing more', async () => {
    const port = await freePort();
    Object.assign(process.env, {
      PORT: String(port),
      TOKEN,
      MRTR_SECRET: randomBytes(32).toString('base64'),
    });
    url = `http://127.0.0.1:${port}/mcp`;
    vi.resetModules();
    await import('../examples/smallest-server.js');
    await waitForServer();
    expect((await callTool({ arguments: { id: 'rec-1' } }, 'wrong')).status).toBe(401);

    const round1 = await callTool({ arguments: { id: 'rec-1' } });
    expect(round1.body.result.resultType).toBe('input_required');
    const [key, request] = Object.entries(round1.body.result.inputRequests)[0] as [
      string,
      { params: { message: string } },
    ];
    expect(request.params.message).toBe('Delete record rec-1? This cannot be undone.');
    const answer = {
      arguments: { id: 'rec-1' },
      requestState: round1.body.result.requestState,
      inputResponses: { [key]: { action: 'accept', content: { confirm: true } } },
    };
    const done = await callTool(answer);
    expect(done.body.result.content[0].text).toBe('Deleted rec-1: true.');

    // The same answer again replays the recorded result; nothing is deleted twice.
    const again = await callTool(answer);
    expect(again.body.result.content[0].text).toBe('Deleted rec-1: true.');
    // The same ticket for another record is refused.
    const swapped = await callTool({ ...answer, arguments: { id: 'rec-2' } });
    expect(swapped.body.error).toMatchObject({ code: -32602 });
    expect(JSON.stringify(swapped.body)).not.toContain('Deleted rec-2');
  });
});
