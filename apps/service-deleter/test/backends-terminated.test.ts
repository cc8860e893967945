/**
 * service-deleter as a process (`DATABASE_URL=postgres://…`, replay store and
 * audit table in that database) on a database of its own, while a second
 * connection keeps terminating the server's backends (`pg_terminate_backend`,
 * error 57P01) during bursts of concurrent confirmations: the process lives,
 * every response is a JSON-RPC response that says what happened, no
 * confirmation is performed twice (one `completed` audit row per nonce at
 * most: that row commits with the mutation), and once the terminations stop
 * the pool has recovered and every confirmation completes exactly once.
 *
 * `MRTR_FAULT_RUNS` bursts (default 6) in one process. Before the fix the
 * process exited on an unhandled `'error'` event of a `pg` client in most runs.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { callTool } from '@mrtr/spec-schema';
import {
  createOwnDatabase,
  type OwnDatabase,
  postgresReachable,
  type ServerProcess,
  startServerProcess,
  terminateBackendsRepeatedly,
} from '@mrtr/test-services';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const postgres = await postgresReachable();
const RUNS = Number(process.env.MRTR_FAULT_RUNS ?? 6);
const CONFIRMATIONS = 6; // services, one ticket each, per burst
const IDENTICAL = 5; // identical retries of each ticket per wave, sent at once
const DIFFERENT = 1; // retries of each ticket per wave that also ask to destroy the volume
const WAVES = 2;
const TOKEN = 'tok-ops';

interface Reply {
  status: number;
  body: any;
}

/** delete_service with HTTP status; a transport failure (the process died) becomes status 0. */
async function send(
  url: string,
  service: { id: string; name: string },
  extra: { requestState?: string; inputResponses?: unknown } = {},
): Promise<Reply> {
  try {
    return await callTool(
      url,
      TOKEN,
      'delete_service',
      { serviceId: service.id, name: service.name },
      extra,
    );
  } catch (error) {
    return { status: 0, body: String(error) };
  }
}

const answer = (name: string, deleteVolumes?: boolean) => ({
  confirm_delete: {
    action: 'accept',
    content: deleteVolumes ? { serviceName: name, deleteVolumes } : { serviceName: name },
  },
});

/** What is wrong with a reply under the fault: `undefined` when nothing is. */
function fault(reply: Reply): string | undefined {
  const { status, body } = reply;
  if (body?.jsonrpc !== '2.0') return `not JSON-RPC (HTTP ${status}): ${String(body)}`;
  if (body.result) return status === 200 ? undefined : `result with HTTP ${status}`;
  // -32603 travels with HTTP 500 (@mrtr/server); it must say what happened, never a bare "Internal error".
  if (
    body.error?.code !== -32603 ||
    !/^This request changed nothing|^The |^An earlier request/.test(body.error.message)
  )
    return `error ${body.error?.code}: ${body.error?.message}`;
  return undefined;
}

const alive = (server: ServerProcess) =>
  server.child.exitCode === null && server.child.signalCode === null;

/** The part of the server's stderr that tells why it died. */
function lastWords(server: ServerProcess): string {
  const text = server.stderr();
  const at = Math.max(0, text.search(/Unhandled|Error/));
  return text.slice(at, at + 1500);
}

describe.skipIf(!postgres)('service-deleter when PostgreSQL terminates its backends', () => {
  let database: OwnDatabase;
  let server: ServerProcess;
  let data: pg.Pool;
  const dir = mkdtempSync(join(tmpdir(), 'deleter-kill-'));

  beforeAll(async () => {
    database = await createOwnDatabase('mrtr_deleter_kill');
    server = await startServerProcess(new URL('..', import.meta.url).pathname, {
      DATABASE_URL: database.url,
      REDIS_URL: '',
      PORT: '0',
      MRTR_TOKENS: `ops:${TOKEN}`,
      MRTR_SECRET: 'k'.repeat(32),
      MRTR_AUDIT_FILE: join(dir, 'audit.jsonl'),
      MRTR_RATE_LIMIT: 'off', // bursts of hundreds of calls: the fault is the point here, not the limit
    });
    data = new pg.Pool({ connectionString: database.url, max: 2 });
    data.on('error', () => {}); // the terminator ends these too
  });

  afterAll(async () => {
    server?.child.kill();
    await data?.end();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A new staging service without volumes (confirmed by form; with one it would take the page); its ticket. */
  async function ticket() {
    const tag = randomBytes(5).toString('hex');
    const service = { id: `svc_${tag}`, name: `web-${tag}` };
    await data.query(
      "INSERT INTO services (id, name, environment, instances) VALUES ($1, $2, 'staging', 2)", // staging: confirmed by form (production needs a passkey)
      [service.id, service.name],
    );
    const first = await send(server.url, service);
    expect(first.body.result?.resultType).toBe('input_required');
    return { service, requestState: first.body.result.requestState as string };
  }

  /** How many `completed` audit rows each service got (one per performed mutation). */
  async function performed(): Promise<Map<string, number>> {
    const { rows } = await data.query<{ arguments: string; n: number }>(
      "SELECT arguments, count(*)::int AS n FROM mrtr_audit WHERE outcome = 'completed' GROUP BY arguments",
    );
    return new Map(rows.map((r) => [JSON.parse(r.arguments).serviceId as string, r.n]));
  }

  const exists = async (id: string) =>
    (await data.query('SELECT 1 FROM services WHERE id = $1', [id])).rows.length === 1;

  it(
    `lives through ${RUNS} bursts of confirmations under pg_terminate_backend; each performs at most once`,
    { timeout: 60_000 + RUNS * 30_000 },
    async () => {
      let terminated = 0;
      for (let run = 0; run < RUNS; run++) {
        const tickets = [];
        for (let i = 0; i < CONFIRMATIONS; i++) tickets.push(await ticket());

        const terminator = await terminateBackendsRepeatedly(database.name, { everyMs: 20 });
        const replies: Reply[] = [];
        for (let wave = 0; wave < WAVES; wave++) {
          const sent = tickets.flatMap(({ service, requestState }) => [
            ...Array.from({ length: IDENTICAL }, () =>
              send(server.url, service, { requestState, inputResponses: answer(service.name) }),
            ),
            ...Array.from({ length: DIFFERENT }, () =>
              send(server.url, service, {
                requestState,
                inputResponses: answer(service.name, true),
              }),
            ),
          ]);
          replies.push(...(await Promise.all(sent)));
        }
        terminated += await terminator.stop();

        expect(alive(server), `the process exited: ${lastWords(server)}`).toBe(true);
        expect(replies.map(fault).filter(Boolean)).toEqual([]);
        const during = await performed();
        for (const { service } of tickets) {
          const n = during.get(service.id) ?? 0;
          expect(n).toBeLessThanOrEqual(1);
          expect(await exists(service.id)).toBe(n === 0);
        }

        // The pool recovered: each confirmation now completes (or is refused as used), once.
        for (const { service, requestState } of tickets) {
          const settled = await send(server.url, service, {
            requestState,
            inputResponses: answer(service.name),
          });
          expect(settled.body.result).toBeDefined();
          expect(await exists(service.id)).toBe(false);
        }
        const after = await performed();
        for (const { service } of tickets) expect(after.get(service.id)).toBe(1);
      }
      expect(terminated).toBeGreaterThan(RUNS);
      expect(alive(server)).toBe(true);
    },
  );
});
