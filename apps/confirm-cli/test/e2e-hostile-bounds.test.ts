/**
 * `mrtr` against a server that tries to spoof who asks, flood the person with
 * questions, or crash the output with values nested 20,000 deep.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { rawServer } from './servers.js';
import { TmuxSession, tmuxAvailable } from './tmux.js';

const MAIN = join(import.meta.dirname, '../dist/main.js');
const hasTmux = tmuxAvailable();
const cleanup: (() => unknown)[] = [];

beforeAll(() => {
  if (!existsSync(MAIN)) throw new Error(`build mrtr first: ${MAIN} is missing`);
});
afterEach(async () => {
  for (const c of cleanup.splice(0)) await c();
});

async function serve(script: Parameters<typeof rawServer>[0]) {
  const s = await rawServer(script);
  cleanup.push(s.close);
  return s;
}

/** `mrtr args` without a terminal: exit code and output. */
async function run(args: string[]) {
  const child = spawn(process.execPath, [MAIN, ...args], {
    env: { ...process.env, MRTR_TOKEN: 'unused', NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => {
    stdout += c;
  });
  child.stderr.on('data', (c) => {
    stderr += c;
  });
  const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { status, stdout, stderr };
}

const DEEP = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
const ESC = '\u001b';
const HOSTILE = `${ESC}]0;PWNED\u0007x\ny\u202e`;

describe('mrtr prints what a hostile server sent, escaped and bounded', () => {
  it('lists tools with escaped argument types, and a tool nested 20,000 deep as left out', async () => {
    const s = await serve({
      tools: `[{"name":"deep","inputSchema":{"type":"object","x":${DEEP}}},${JSON.stringify({
        name: 'ok',
        inputSchema: { type: 'object', properties: { a: { type: HOSTILE } } },
      })}]`,
    });
    const r = await run(['tools', s.url]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('--arg a=…  \\u{1b}]0;PWNED\\u{7}x\\ny\\u{202e}');
    expect(r.stdout).toContain('(left out deep: the inputSchema nests deeper than 64 levels)');
    expect(r.stdout.replace(/\n/g, '')).not.toMatch(/[\p{Cc}\p{Cf}]/u);
  });

  it('prints a result with unprintable blocks and deep content, exit as the result says', async () => {
    const s = await serve({
      call: (_params, n) =>
        n === 0
          ? `"result":{"content":[null,{"type":5},{"type":"image","data":${DEEP}}]}`
          : `"result":{"isError":true,"content":[],"structuredContent":{"a":${DEEP}}}`,
    });
    const ok = await run(['call', s.url, 't']);
    expect(ok.stderr).toBe('');
    expect(ok.status).toBe(0);
    expect(ok.stdout).toContain(
      '[?] (a block that is not an object: null)\n[?] {"type":5}\n[image] {',
    );
    const failed = await run(['call', s.url, 't']);
    expect(failed.stderr).toBe('');
    expect(failed.status).toBe(1);
    expect(failed.stdout).toContain('"a": [');
    expect(failed.stdout).toContain('[…]');
  });

  it('explains -32021 and -32022 with data nested 20,000 deep: exit 2, no crash', async () => {
    const s = await serve({
      call: (_params, n) =>
        n === 0
          ? `"error":{"code":-32021,"message":"needs","data":{"requiredCapabilities":${DEEP}}}`
          : `"error":{"code":-32022,"message":"old","data":{"supported":${DEEP}}}`,
    });
    const needs = await run(['call', s.url, 't']);
    expect(needs.status).toBe(2);
    expect(needs.stderr).toMatch(
      /^mrtr: The server needs a client that can ask you questions \[\[/,
    );
    expect(needs.stderr).not.toContain('RangeError');
    const old = await run(['call', s.url, 't']);
    expect(old.status).toBe(2);
    expect(old.stderr).toMatch(/it supports: \[\[.*\): old\n$/);
  });
});

function mrtr(args: string[]): TmuxSession {
  const t = new TmuxSession([process.execPath, MAIN, ...args], {
    MRTR_TOKEN: 'unused',
    NO_COLOR: '1',
  });
  cleanup.push(() => t.kill());
  return t;
}

const form = (message: string) =>
  JSON.stringify({
    method: 'elicitation/create',
    params: {
      message,
      requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
    },
  });

/** Asks `count` questions in every round of `rounds`, then says how many answers of which actions came. */
const asking =
  (count: number, rounds = 1) =>
  (params: any, n: number) => {
    if (n >= rounds) {
      const actions = new Set(Object.values(params.inputResponses).map((r: any) => r.action));
      const text = `got ${Object.keys(params.inputResponses).length} answers: ${[...actions].join(',')}`;
      return `"result":{"content":[{"type":"text","text":${JSON.stringify(text)}}]}`;
    }
    const requests = Array.from({ length: count }, (_, i) => `"q${i}":${form(`Question ${i}`)}`);
    return `"result":{"resultType":"input_required","inputRequests":{${requests.join(',')}}}`;
  };

describe.skipIf(!hasTmux)('mrtr puts a bounded round to the person', () => {
  it('shows who asks so a name or a message cannot pose as the header, and names the host at the menu', async () => {
    const s = await serve({
      name: `Trusted Bank" at https://bank.example/mcp  (verified)${' '.repeat(300)}`,
      call: (_params, n) =>
        n === 0
          ? `"result":{"resultType":"input_required","inputRequests":{"q":${form(
              `Delete?${'\n'.repeat(80)}Question from "Trusted Bank" at https://bank.example/mcp`,
            )}}}`
          : '"result":{"content":[]}',
    });
    const t = mrtr(['call', s.url, 't']);
    const screen = await t.waitFor(/What would you like to do\?/);
    expect(screen).toContain(
      `Question from "Trusted Bank\\u{22} at https://bank.example/mcp (verified)" (its own name) at ${s.url}`,
    );
    expect(screen).toContain(`What would you like to do? (asked by ${s.host})`);
    // The 80 line breaks are one blank line: the real header stays right above the message.
    expect(screen).toMatch(/Delete\?\n[│|]\s*\n[│|]\s+Question from "Trusted Bank"/);
  });

  it('declines a round of 5,000 questions without asking', async () => {
    const s = await serve({ call: asking(5000) });
    const t = mrtr(['call', s.url, 't']);
    const screen = await t.waitFor(/\[mrtr exited \d+\]/);
    expect(screen).not.toContain('What would you like to do?');
    expect(screen).toContain('at most 20 to a person in one round');
    expect(screen).toContain('More questions of this round were declined without asking you');
    expect(screen).toContain('got 5000 answers: decline\n');
    expect(screen).toContain('[mrtr exited 0]');
    expect(Object.values(s.calls[1].inputResponses).every((r: any) => r.action === 'decline')).toBe(
      true,
    );
  });

  it('ends the whole call on Ctrl-C: the rest of the round and later rounds are cancelled unasked', async () => {
    const s = await serve({ call: asking(3, 2) });
    const t = mrtr(['call', s.url, 't']);
    await t.waitFor(/What would you like to do\?/);
    t.keys(['C-c']);
    const screen = await t.waitFor(/\[mrtr exited \d+\]/);
    expect(screen.match(/What would you like to do\?/g)).toHaveLength(1);
    expect(screen).toContain('[mrtr exited 130]');
    const cancelled = {
      q0: { action: 'cancel' },
      q1: { action: 'cancel' },
      q2: { action: 'cancel' },
    };
    expect(s.calls[1].inputResponses).toEqual(cancelled);
    expect(s.calls[2].inputResponses).toEqual(cancelled);
  });

  /** A URL-mode question, as the JSON of an input request. */
  const APPROVE_URL = JSON.stringify({
    method: 'elicitation/create',
    params: {
      mode: 'url',
      message: 'Approve on the page',
      url: 'http://127.0.0.1:9/approve',
      elicitationId: 'e1',
    },
  });

  it.each([
    ['Ctrl-C', 'C-c'],
    ['Esc', 'Escape'],
  ])('ends the whole call on %s at the URL prompt to continue: a later form is cancelled unasked, exit 130', async (_name, key) => {
    const s = await serve({
      call: (_params, n) =>
        n === 0
          ? `"result":{"resultType":"input_required","inputRequests":{"u":${APPROVE_URL}}}`
          : n === 1
            ? `"result":{"resultType":"input_required","inputRequests":{"q":${form('Second question')}}}`
            : '"result":{"content":[{"type":"text","text":"done"}]}',
    });
    const t = mrtr(['call', s.url, 't']);
    await t.waitFor(/Go to this URL in your browser\?/);
    t.keys(['Enter']); // I will open it
    await t.waitFor(/Continue once you have finished in the browser/);
    t.keys([key]);
    const screen = await t.waitFor(/\[mrtr exited \d+\]/);
    expect(screen).toContain(
      'Cancelled: you dismissed the question with Ctrl-C or Esc, which ends the call. The server is told you dismissed the question.',
    );
    expect(screen).toContain(
      'The server asked again after you ended the call: answered cancel without showing it.',
    );
    expect(screen).not.toContain('Second question');
    expect(screen).not.toContain('What would you like to do?');
    expect(screen).toContain('[mrtr exited 130]');
    expect(s.calls[1].inputResponses).toEqual({ u: { action: 'cancel' } });
    expect(s.calls[2].inputResponses).toEqual({ q: { action: 'cancel' } });
  });

  it('takes Cancel chosen at the URL prompt to continue as an answer: it says so, and the call goes on', async () => {
    const s = await serve({
      call: (_params, n) =>
        n === 0
          ? `"result":{"resultType":"input_required","inputRequests":{"u":${APPROVE_URL}}}`
          : '"result":{"content":[{"type":"text","text":"done"}]}',
    });
    const t = mrtr(['call', s.url, 't']);
    await t.waitFor(/Go to this URL in your browser\?/);
    t.keys(['Enter']); // I will open it
    await t.waitFor(/Continue once you have finished in the browser/);
    t.keys(['Right', 'Enter']); // Cancel
    const screen = await t.waitFor(/\[mrtr exited \d+\]/);
    expect(screen).toContain(
      'Cancelled: you chose Cancel. The server is told you dismissed the question.',
    );
    expect(screen).toContain('[mrtr exited 0]');
    expect(s.calls[1].inputResponses).toEqual({ u: { action: 'cancel' } });
  });

  it('bounds titles, descriptions and choice labels, so they cannot push the header off the screen', async () => {
    const fakeHeader = `${'x'.repeat(60)}${' '.repeat(200)}Question from "Your Bank" at https://bank.example/mcp${' '.repeat(200)}`;
    const question = JSON.stringify({
      method: 'elicitation/create',
      params: {
        message: 'Delete the thing?',
        requestedSchema: {
          type: 'object',
          properties: {
            confirm: {
              type: 'boolean',
              title: `Confirm${'T'.repeat(5000)}`,
              description: `${fakeHeader}${'all good, safe to accept '.repeat(400)}`,
            },
            env: {
              type: 'string',
              enum: ['staging', 'prod'],
              enumNames: [`Staging${' '.repeat(300)}${'L'.repeat(5000)}`, 'Prod'],
            },
          },
          required: ['env'],
        },
      },
    });
    const s = await serve({
      call: (_params, n) =>
        n === 0
          ? `"result":{"resultType":"input_required","inputRequests":{"q":${question}}}`
          : '"result":{"content":[]}',
    });
    const t = mrtr(['call', s.url, 't']);
    await t.waitFor(/What would you like to do\?/);
    t.keys(['Enter']); // Answer
    await t.waitFor(/Yes \/ ● No/);
    let shown = t.visibleScreen();
    // The real header is still on the screen, and the padding did not give the fake one a line of its own.
    expect(shown).toContain(`Question from "raw" (its own name) at ${s.url}`);
    expect(shown).not.toMatch(/^[│|◆*]?\s*Question from "Your Bank"/m);
    // clack wraps long lines itself: read them joined.
    const joined = (screen: string) => screen.replace(/\s*\n[│|] {2}/g, ' ');
    expect(joined(shown)).toContain(
      `Confirm${'T'.repeat(112)}… (4888 more characters not shown) (optional)`,
    );
    expect(joined(shown)).toContain('all good,… (9616 more characters not shown)');
    t.keys(['Enter']); // No
    await t.waitFor(/Staging L+…/);
    shown = t.visibleScreen();
    expect(shown).toContain(`Question from "raw" (its own name) at ${s.url}`);
    expect(joined(shown)).toContain(`Staging ${'L'.repeat(111)}… (4889 more characters not shown)`);
  });

  it('declines a URL too long to show whole, saying why, and shows one within the bound whole', async () => {
    const urlQuestion = (url: string) =>
      JSON.stringify({
        method: 'elicitation/create',
        params: { mode: 'url', message: 'Approve on the page', url, elicitationId: 'e1' },
      });
    const long = `http://127.0.0.1:9/${'a'.repeat(300_000)}`;
    const s = await serve({
      call: (_params, n) =>
        n === 0
          ? `"result":{"resultType":"input_required","inputRequests":{"u":${urlQuestion(long)}}}`
          : '"result":{"content":[{"type":"text","text":"done"}]}',
    });
    const t = mrtr(['call', s.url, 't']);
    const screen = await t.waitFor(/\[mrtr exited \d+\]/);
    expect(screen).toContain(
      'The server sent a URL of 300019 characters: mrtr shows and lets you open URLs of at most 2048, so it was declined without asking you.',
    );
    expect(screen).toContain('Declined: the server is told no.');
    expect(screen).not.toContain('Go to this URL in your browser?');
    expect(screen).toContain('[mrtr exited 0]');
    expect(screen.length).toBeLessThan(5000);
    expect(s.calls[1].inputResponses).toEqual({ u: { action: 'decline' } });

    const fits = `http://127.0.0.1:9/${'b'.repeat(2048 - 19)}`;
    const s2 = await serve({
      call: (_params, n) =>
        n === 0
          ? `"result":{"resultType":"input_required","inputRequests":{"u":${urlQuestion(fits)}}}`
          : '"result":{"content":[]}',
    });
    const t2 = mrtr(['call', s2.url, 't']);
    const shown = await t2.waitFor(/Go to this URL in your browser\?/);
    expect(shown).toContain(`URL:  ${fits}\n`);
  });
});
