/**
 * The client side of a file deleter (`delete_file {path}`): the answer is checked
 * against the requested schema before it is sent, an unanswered question is
 * a cancel and the client carries on, a late answer is never sent, and a form
 * the client cannot draw is declined without asking and reported to the
 * audit hook. Against a scripted `delete_file` that deletes on a valid,
 * matching accept only.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type ClientEvent, type FormQuestion, McpClient } from '../src/index.js';
import { scriptedAnswerer, scriptedServer } from './helpers.js';

/** The file deleter's DeleteConfirmation form, as the elicitation `requestedSchema`. */
const deleteConfirmation = {
  type: 'object',
  properties: {
    confirm_name: { type: 'string', description: 'Type the file path to confirm' },
    reason: {
      type: 'string',
      minLength: 5,
      maxLength: 200,
      description: "Why it's being deleted (recorded in the server audit log)",
    },
    keep_backup: {
      type: 'boolean',
      default: false,
      description: 'Keep a .bak copy instead of deleting outright',
    },
  },
  required: ['confirm_name', 'reason'],
};

const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** `delete_file {path}`: asks with `schema` until answered; deletes on an accept whose confirm_name matches. */
async function fileDeleter(schema: Record<string, unknown> = deleteConfirmation) {
  const deleted: string[] = [];
  const s = await scriptedServer((body) => {
    const path = body.params.arguments?.path as string;
    const answer = body.params.inputResponses?.confirm;
    const text = (t: string) => ({
      result: { content: [{ type: 'text', text: t }], isError: false },
    });
    if (!answer || (answer.action === 'cancel' && body.params.requestState === 'again'))
      return {
        result: {
          resultType: 'input_required',
          inputRequests: {
            confirm: {
              method: 'elicitation/create',
              params: {
                mode: 'form',
                message: `Confirm deletion of ${path} (2.3 KB, modified 2026-10-05 14:30)`,
                requestedSchema: schema,
              },
            },
          },
          requestState: answer ? 'last' : 'again',
        },
      };
    if (answer.action === 'decline') return text('Deletion declined by the user');
    if (answer.action === 'cancel') return text('Deletion cancelled');
    if (answer.content?.confirm_name !== path) return text('Confirmation did not match');
    deleted.push(path);
    return text(`Deleted ${path}`);
  });
  servers.push(s);
  return { ...s, deleted };
}

const sentAccepts = (s: { requests: { raw: string }[] }) =>
  s.requests.filter((r) => r.raw.includes('"accept"'));

describe('the file deleter, client side', () => {
  it('checks the answer against the requested schema before sending; the person sees why', async () => {
    const s = await fileDeleter();
    const retries: FormQuestion['retry'][] = [];
    const { answerer } = scriptedAnswerer([
      { action: 'accept', content: { confirm_name: 'notes.txt', reason: 'old' } },
      async (q) => {
        retries.push(q.retry);
        return { action: 'accept', content: { confirm_name: 'notes.txt', reason: 'cleanup done' } };
      },
    ]);
    const out = await new McpClient({ url: s.url, answerer }).callTool('delete_file', {
      path: 'notes.txt',
    });
    expect(out.result.content[0]?.text).toBe('Deleted notes.txt');
    expect(retries[0]?.issues).toEqual([{ field: 'reason', reason: expect.stringMatching(/5/) }]);
    expect(s.requests.map((r) => r.raw).join()).not.toContain('"old"');
    expect(s.requests[1]?.body.params.inputResponses.confirm.content).toEqual({
      confirm_name: 'notes.txt',
      reason: 'cleanup done',
    });
  });

  it('treats no answer within the timeout as cancel, and the client carries on', async () => {
    const s = await fileDeleter();
    const { answerer } = scriptedAnswerer([
      () => new Promise(() => {}), // the person walked away
      { action: 'decline' },
      { action: 'accept', content: { confirm_name: 'b.txt', reason: 'not needed' } },
    ]);
    const client = new McpClient({ url: s.url, answerer, answerTimeoutMs: 40 });
    const first = await client.callTool('delete_file', { path: 'a.txt' });
    expect(s.requests[1]?.body.params.inputResponses).toEqual({ confirm: { action: 'cancel' } });
    // The server asked again after the cancel; the person declined.
    expect(first.result.content[0]?.text).toBe('Deletion declined by the user');
    const second = await client.callTool('delete_file', { path: 'b.txt' });
    expect(second.result.content[0]?.text).toBe('Deleted b.txt');
    expect(s.deleted).toEqual(['b.txt']);
  });

  it('never sends an answer given after the timeout: a late accept deletes nothing', async () => {
    const s = await fileDeleter();
    let late: Promise<unknown> | undefined;
    const { answerer } = scriptedAnswerer([
      () => {
        late = new Promise((resolve) => setTimeout(resolve, 150)).then(() => ({
          action: 'accept' as const,
          content: { confirm_name: 'a.txt', reason: 'too late now' },
        }));
        return late as Promise<never>;
      },
      { action: 'cancel' },
    ]);
    const out = await new McpClient({ url: s.url, answerer, answerTimeoutMs: 30 }).callTool(
      'delete_file',
      { path: 'a.txt' },
    );
    expect(out.result.content[0]?.text).toBe('Deletion cancelled');
    await late;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(sentAccepts(s)).toEqual([]);
    expect(s.requests).toHaveLength(3);
    expect(s.deleted).toEqual([]);
  });

  it.each([
    [
      'a nested object',
      { type: 'object', properties: { target: { type: 'object', properties: {} } } },
    ],
    ['an unsupported type', { type: 'object', properties: { when: { type: 'null' } } }],
    [
      'a list of objects',
      { type: 'object', properties: { files: { type: 'array', items: { type: 'object' } } } },
    ],
  ])('declines a form with %s without asking, and tells the audit hook', async (_, schema) => {
    const s = await fileDeleter(schema);
    const audit: ClientEvent[] = [];
    const { answerer, questions } = scriptedAnswerer([]);
    const out = await new McpClient({
      url: s.url,
      answerer,
      onEvent: (e) => audit.push(e),
    }).callTool('delete_file', { path: 'a.txt' });
    expect(questions).toEqual([]);
    expect(s.requests[1]?.body.params.inputResponses).toEqual({ confirm: { action: 'decline' } });
    expect(out.result.content[0]?.text).toBe('Deletion declined by the user');
    const declined = audit.filter((e) => e.type === 'auto-declined');
    expect(declined).toEqual([
      {
        type: 'auto-declined',
        key: 'confirm',
        request: { method: 'tools/call', target: 'delete_file', arguments: { path: 'a.txt' } },
        round: 1,
        mode: 'form',
        reasons: [expect.any(String)],
        message: 'Confirm deletion of a.txt (2.3 KB, modified 2026-10-05 14:30)',
      },
    ]);
    expect(out.autoDeclined).toEqual(declined);
    expect(s.deleted).toEqual([]);
  });
});
