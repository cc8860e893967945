/**
 * A file deleter on a fresh temporary root, driven over real HTTP with the
 * raw client of `@mrtr/spec-schema` (every message checked against the
 * official schema.json).
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { GateAuditEvent } from '@mrtr/gate';
import { type Capabilities, callTool } from '@mrtr/spec-schema';
import { expect } from 'vitest';
import {
  type FileDeleterOptions,
  type RunningServer,
  randomSecret,
  startFileDeleter,
} from '../src/app.js';
import { type Database, openDatabase } from '../src/db.js';

export const TOKEN = 'tok-alice';
export const TOOL = 'delete_file';
export const KEY = 'confirm_delete';

export interface Harness {
  /** A scratch folder; the files root is `<base>/root`, and `<base>/outside` is outside it. */
  base: string;
  root: string;
  outside: string;
  db: Database;
  servers: RunningServer[];
  url: string;
  events: GateAuditEvent[];
  clock: { offsetMs: number };
  close(): Promise<void>;
}

/**
 * Start `instances` servers on one root, one in-memory database and one ticket secret.
 * @param options overrides of the app options (hooks, store…)
 */
export async function startHarness(
  options: Partial<FileDeleterOptions> & { instances?: number } = {},
): Promise<Harness> {
  const base = mkdtempSync(join(tmpdir(), 'file-deleter-'));
  const root = join(base, 'root');
  const outside = join(base, 'outside');
  mkdirSync(root);
  mkdirSync(outside);
  const db = options.db ?? (await openDatabase('memory://'));
  const events: GateAuditEvent[] = [];
  const clock = { offsetMs: 0 };
  const secret = randomSecret();
  const servers: RunningServer[] = [];
  for (let i = 0; i < (options.instances ?? 1); i++) {
    servers.push(
      await startFileDeleter({
        db,
        root,
        tokens: new Map([
          [TOKEN, 'alice'],
          ['tok-bob', 'bob'],
        ]),
        secret,
        audit: (e) => void events.push(e),
        now: () => Date.now() + clock.offsetMs,
        ...options,
      }),
    );
  }
  return {
    base,
    root,
    outside,
    db,
    servers,
    url: (servers[0] as RunningServer).url,
    events,
    clock,
    async close() {
      for (const s of servers) await s.close();
      if (!options.db) await db.close();
      rmSync(base, { recursive: true, force: true });
    },
  };
}

/** How many deletions table `file_deletions` holds. */
export const deletionCount = async (x: Harness) =>
  (await x.db.query('SELECT nonce FROM file_deletions')).rows.length;

/** Write `text` at `path` under `dir` (folders made). */
export function put(dir: string, path: string, text: string): string {
  const full = join(dir, path);
  mkdirSync(dirname(full), { recursive: true });
  writeFileSync(full, text);
  return full;
}

/** The names in the trash folder of `root`. */
export const trash = (root: string) => readdirSync(join(root, '.mrtr-trash'));
export const exists = (dir: string, path: string) => existsSync(join(dir, path));

/** `tools/call delete_file {path}` with the raw client. */
export async function call(
  url: string,
  path: unknown,
  round: {
    requestState?: string;
    inputResponses?: unknown;
    capabilities?: Capabilities;
    token?: string;
  } = {},
) {
  const { token = TOKEN, ...rest } = round;
  return (await callTool(url, token, TOOL, { path }, rest)).body;
}

/** Round 1: the question and the ticket. */
export async function ask(url: string, path: string) {
  const body = await call(url, path);
  expect(body.error).toBeUndefined();
  expect(body.result.resultType).toBe('input_required');
  const request = body.result.inputRequests[KEY];
  expect(request.method).toBe('elicitation/create');
  return {
    message: request.params.message as string,
    schema: request.params.requestedSchema,
    ticket: body.result.requestState as string,
  };
}

/** An accepted answer. */
export const accept = (content: Record<string, unknown>) => ({
  [KEY]: { action: 'accept', content },
});
/** The answer of a person who typed `path` with a good reason. */
export const confirmed = (path: string, keep_backup?: boolean) =>
  accept({
    confirm_name: path,
    reason: 'cleanup after the release',
    ...(keep_backup === undefined ? {} : { keep_backup }),
  });

/** Round 2. */
export const answer = (url: string, path: string, requestState: string, inputResponses?: unknown) =>
  call(url, path, { requestState, ...(inputResponses === undefined ? {} : { inputResponses }) });

/** The text of a complete result. */
/** The result's first text block: the message (a result with `structuredContent` also carries it as JSON in a second block). */
export const textOf = (body: any): string =>
  (body.result?.content ?? []).find((c: { type?: string }) => c.type === 'text')?.text ?? '';
