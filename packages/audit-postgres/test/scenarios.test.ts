/**
 * The operations the audit trail exists for, end to end on a real replay
 * store: a completed, a declined, a cancelled and a refused confirmation each
 * leave the right records in both sinks (JSON lines in a file, the
 * PostgreSQL table) and the right spans; a failing sink prevents the
 * mutation. On PGlite, and on the PostgreSQL server at DATABASE_URL.
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { JsonLinesAuditSink, type LineDestination } from '@mrtr/audit';
import { ConfirmationGate, type GateAuditEvent, StaleTargetError } from '@mrtr/gate';
import { migrateReplayTable, PostgresReplayStore } from '@mrtr/replay-postgres';
import { pgliteDriver, pgPoolDriver, type SqlDriver, type SqlQueryable } from '@mrtr/sql';
import { dropSchema, poolInSchema, postgresReachable } from '@mrtr/test-services';
import { TicketSealer } from '@mrtr/ticket';
import { textResult } from '@mrtr/wire';
import { SpanStatusCode } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateAuditTable, PostgresAuditSink, readAuditRecords } from '../src/index.js';

const reachable = await postgresReachable();
const schema = `audit_scenarios_${process.pid}_${Date.now().toString(36)}`;
const dir = mkdtempSync(join(tmpdir(), 'mrtr-audit-'));
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  if (reachable) await dropSchema(schema);
});

const CLIENT = '00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01';

/** Everything one backend needs: the gate on the PostgreSQL replay store, both sinks, spans. */
async function harness(driver: SqlDriver, file: string) {
  await driver.query(
    'CREATE TABLE IF NOT EXISTS services (id text PRIMARY KEY, name text NOT NULL)',
  );
  await migrateReplayTable(driver);
  await migrateAuditTable(driver);
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  // The JSON-lines file, with a switch to make its writes fail like a full disk.
  const trail = { failing: false };
  const destination: LineDestination = {
    write(line) {
      if (trail.failing)
        throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
      appendFileSync(file, line);
    },
  };
  const json = new JsonLinesAuditSink({ destination, base: null });
  const gate = new ConfirmationGate<SqlQueryable>({
    sealer: new TicketSealer({ keys: [{ kid: 'k1', secret: 'd'.repeat(32) }] }),
    store: new PostgresReplayStore(driver),
    audit: [json, new PostgresAuditSink(driver)],
    tracer: provider.getTracer('audit-scenarios'),
    propagator: new W3CTraceContextPropagator(),
  });
  let id = 0;
  const call = (
    serviceId: string,
    extra: { requestState?: string; answer?: Record<string, unknown> } = {},
  ) =>
    gate.run<{ name: string }>(
      {
        principal: 'user_5f2a',
        method: 'tools/call',
        name: 'delete_service',
        arguments: { serviceId, name: 'api-prod' },
        capabilities: { elicitation: {} },
        requestState: extra.requestState,
        inputResponses: extra.answer ? { confirm_delete: extra.answer } : undefined,
        requestId: ++id,
        meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'agent', version: '2.0.0' },
          traceparent: CLIENT,
        },
      },
      {
        key: 'confirm_delete',
        async prepare(tx) {
          const { rows } = await (tx ?? driver).query<{ name: string }>(
            'SELECT name FROM services WHERE id = $1',
            [serviceId],
          );
          if (!rows[0])
            return { result: textResult(`No service ${serviceId}.`, { isError: true }) };
          return { view: { name: rows[0].name } };
        },
        question: ({ view }) => ({
          message: `Delete ${view.name} (${serviceId})? It cannot be undone. Type the service name to confirm.`,
          requestedSchema: {
            type: 'object',
            properties: { serviceName: { type: 'string', title: 'Service name' } },
            required: ['serviceName'],
          },
        }),
        check: (content, { view }) =>
          content.serviceName === view.name ? undefined : 'The name did not match.',
        consents: () => true, // typing the name (check) is the consent
        async perform({ tx, view }) {
          const { rows } = await tx.query(
            'DELETE FROM services WHERE id = $1 AND name = $2 RETURNING id',
            [serviceId, view.name],
          );
          if (rows.length === 0) throw new StaleTargetError('gone');
          return textResult(`Deleted ${view.name} (${serviceId}).`);
        },
      },
    );
  const seed = async (serviceId: string) => {
    await driver.query('INSERT INTO services (id, name) VALUES ($1, $2)', [serviceId, 'api-prod']);
  };
  const ask = async (serviceId: string) => {
    await seed(serviceId);
    const r = await call(serviceId);
    expect(r.resultType).toBe('input_required');
    return (r as { requestState: string }).requestState;
  };
  const exists = async (serviceId: string) =>
    (await driver.query('SELECT 1 FROM services WHERE id = $1', [serviceId])).rows.length === 1;
  const claimed = async (nonce: string) =>
    (await driver.query('SELECT 1 FROM mrtr_replay WHERE nonce = $1', [nonce])).rows.length === 1;
  const lines = () =>
    readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as GateAuditEvent & { msg: string; level: string; time: string });
  /** The records of one operation in each sink, and its spans. */
  const trailOf = async (nonce: string) => ({
    json: lines().filter((l) => l.nonce === nonce),
    table: await readAuditRecords(driver, { nonce }),
    spans: exporter.getFinishedSpans().filter((s) => s.attributes['mrtr.ticket.nonce'] === nonce),
  });
  return { call, ask, exists, claimed, lines, trailOf, trail, driver };
}

type Harness = Awaited<ReturnType<typeof harness>>;
const outcomes = (records: { outcome: string }[]) => records.map((r) => r.outcome);
const nonceOf = (h: Harness) => h.lines().at(-1)?.nonce as string;
/** The fields both sinks must agree on. */
const essence = (r: GateAuditEvent) => ({
  outcome: r.outcome,
  reason: r.reason,
  principal: r.principal,
  client: r.client,
  operation: r.operation,
  arguments: r.arguments,
  argumentsDigest: r.argumentsDigest,
  nonce: r.nonce,
  question: r.question,
  requestedSchema: r.requestedSchema,
  answer: r.answer,
  isError: r.isError,
  requestId: r.requestId,
  trace: r.trace,
  receivedAt: r.receivedAt,
  at: r.at,
});

function scenarios(
  name: string,
  open: () => Promise<{ driver: SqlDriver; close(): Promise<void> }>,
  skip = false,
) {
  describe.skipIf(skip)(name, () => {
    let h: Harness;
    let db: { driver: SqlDriver; close(): Promise<void> };
    beforeAll(async () => {
      db = await open();
      h = await harness(db.driver, join(dir, `${name.replace(/\W+/g, '-')}.jsonl`));
    });
    afterAll(async () => {
      await db?.close();
    });

    it('a completed operation: asked, accepted, completed in both sinks; the completed row committed with the delete', async () => {
      const ticket = await h.ask('svc_complete');
      const nonce = nonceOf(h);
      const done = await h.call('svc_complete', {
        requestState: ticket,
        answer: { action: 'accept', content: { serviceName: 'api-prod' } },
      });
      expect(done).toMatchObject({ isError: false });
      expect(await h.exists('svc_complete')).toBe(false);
      expect(await h.claimed(nonce)).toBe(true);
      const { json, table, spans } = await h.trailOf(nonce);
      expect(outcomes(json)).toEqual(['asked', 'accepted', 'completed']);
      expect(table.map(essence)).toEqual(json.map(essence));
      expect(json[0]).toMatchObject({
        msg: 'mrtr.audit',
        level: 'info',
        principal: 'user_5f2a',
        client: { name: 'agent', version: '2.0.0' },
        question:
          'Delete api-prod (svc_complete)? It cannot be undone. Type the service name to confirm.',
        arguments: { name: 'api-prod', serviceId: 'svc_complete' },
      });
      expect(json[2]?.answer).toEqual({ action: 'accept', content: { serviceName: 'api-prod' } });
      expect(JSON.stringify(json)).not.toContain(ticket);
      // The table alone proves the digest: recompute it in SQL from the canonical arguments.
      const { rows } = await h.driver.query<{ ok: boolean }>(
        `SELECT bool_and(arguments_digest = 'sha256:' || rtrim(translate(encode(sha256(
           '\\x6d7274722d676174652f6469676573742f763100'::bytea || convert_to(arguments, 'UTF8')),
           'base64'), '+/', '-_'), '=')) AS ok FROM mrtr_audit WHERE nonce = $1`,
        [nonce],
      );
      expect(rows[0]?.ok).toBe(true);
      expect(spans.map((s) => s.attributes['mrtr.gate.outcome'])).toEqual(['asked', 'completed']);
      expect(spans[1]?.links[0]?.context.spanId).toBe(spans[0]?.spanContext().spanId);
      expect(spans.every((s) => s.spanContext().traceId === CLIENT.split('-')[1])).toBe(true);
      expect(json.map((r) => r.trace?.spanId)).toEqual([
        spans[0]?.spanContext().spanId,
        spans[1]?.spanContext().spanId,
        spans[1]?.spanContext().spanId,
      ]);
    });

    it('arguments over 16 KiB: every record keeps their length instead, and the operation completes', async () => {
      // A long id makes the canonical arguments longer than the gate's MAX_RECORDED_ARGUMENTS.
      const serviceId = `svc_${'x'.repeat(17_000)}`;
      const ticket = await h.ask(serviceId);
      const nonce = nonceOf(h);
      const done = await h.call(serviceId, {
        requestState: ticket,
        answer: { action: 'accept', content: { serviceName: 'api-prod' } },
      });
      expect(done).toMatchObject({ isError: false });
      expect(await h.exists(serviceId)).toBe(false);
      const { json, table } = await h.trailOf(nonce);
      expect(outcomes(table)).toEqual(['asked', 'accepted', 'completed']);
      const length = JSON.stringify({ name: 'api-prod', serviceId }).length;
      for (const r of [...json, ...table]) {
        expect(r.arguments).toBeUndefined();
        expect(r.argumentsLength).toBe(length);
      }
    });

    it('a declined operation: asked, declined in both sinks; nothing deleted, the nonce used up', async () => {
      const ticket = await h.ask('svc_decline');
      const nonce = nonceOf(h);
      const r = await h.call('svc_decline', {
        requestState: ticket,
        answer: { action: 'decline' },
      });
      expect(r).toMatchObject({ isError: false });
      expect(await h.exists('svc_decline')).toBe(true);
      expect(await h.claimed(nonce)).toBe(true);
      const { json, table, spans } = await h.trailOf(nonce);
      expect(outcomes(json)).toEqual(['asked', 'declined']);
      expect(table.map(essence)).toEqual(json.map(essence));
      expect(json[1]).toMatchObject({ answer: { action: 'decline' }, question: json[0]?.question });
      expect(spans.map((s) => s.attributes['mrtr.gate.outcome'])).toEqual(['asked', 'declined']);
      expect(spans[1]?.links).toHaveLength(1);
    });

    it('a cancelled operation: asked, cancelled in both sinks; nothing deleted or used up', async () => {
      const ticket = await h.ask('svc_cancel');
      const nonce = nonceOf(h);
      await h.call('svc_cancel', { requestState: ticket, answer: { action: 'cancel' } });
      expect(await h.exists('svc_cancel')).toBe(true);
      expect(await h.claimed(nonce)).toBe(false);
      const { json, table, spans } = await h.trailOf(nonce);
      expect(outcomes(json)).toEqual(['asked', 'cancelled']);
      expect(table.map(essence)).toEqual(json.map(essence));
      expect(spans.map((s) => s.attributes['mrtr.gate.outcome'])).toEqual(['asked', 'cancelled']);
    });

    it('refused operations: a ticket presented for other arguments, and a used nonce, in both sinks', async () => {
      const ticket = await h.ask('svc_refuse');
      const nonce = nonceOf(h);
      await h.ask('svc_other');
      // The ticket for svc_refuse, presented to delete svc_other: refused, nothing deleted.
      await expect(
        h.call('svc_other', {
          requestState: ticket,
          answer: { action: 'accept', content: { serviceName: 'api-prod' } },
        }),
      ).rejects.toMatchObject({ code: -32602 });
      const moved = h.lines().at(-1) as GateAuditEvent;
      expect(moved).toMatchObject({
        outcome: 'refused',
        reason: 'ticket_mac',
        arguments: { serviceId: 'svc_other' },
      });
      expect(moved.nonce).toBeUndefined();
      const tableLast = (await readAuditRecords(h.driver)).at(-1) as GateAuditEvent;
      expect(essence(tableLast)).toEqual(essence(moved));
      expect(await h.exists('svc_other')).toBe(true);
      // A decline uses the nonce up; a later accept of the same ticket is refused.
      await h.call('svc_refuse', { requestState: ticket, answer: { action: 'decline' } });
      const used = await h.call('svc_refuse', {
        requestState: ticket,
        answer: { action: 'accept', content: { serviceName: 'api-prod' } },
      });
      expect(used).toMatchObject({ isError: true });
      expect(await h.exists('svc_refuse')).toBe(true);
      const { json, table, spans } = await h.trailOf(nonce);
      expect(json.map((r) => [r.outcome, r.reason])).toEqual([
        ['asked', undefined],
        ['declined', undefined],
        ['accepted', undefined],
        ['refused', 'nonce_used'],
      ]);
      expect(table.map(essence)).toEqual(json.map(essence));
      expect(spans.at(-1)?.attributes['mrtr.gate.outcome']).toBe('refused');
      expect(spans.at(-1)?.status.code).toBe(SpanStatusCode.ERROR);
    });

    it('a table sink that cannot write completed rolls back the claim and the delete; a retry completes', async () => {
      const ticket = await h.ask('svc_rollback');
      const nonce = nonceOf(h);
      // A real failure inside the transaction: the database refuses the completed row.
      await h.driver.query(`CREATE OR REPLACE FUNCTION audit_refuse() RETURNS trigger AS $$
        BEGIN RAISE EXCEPTION 'audit table refuses the row'; END $$ LANGUAGE plpgsql`);
      await h.driver.query(`CREATE TRIGGER audit_refuse BEFORE INSERT ON mrtr_audit FOR EACH ROW
        WHEN (NEW.outcome = 'completed') EXECUTE FUNCTION audit_refuse()`);
      const accept = () =>
        h.call('svc_rollback', {
          requestState: ticket,
          answer: { action: 'accept', content: { serviceName: 'api-prod' } },
        });
      try {
        await expect(accept()).rejects.toMatchObject({
          code: -32603,
          message: expect.stringMatching(/^This request changed nothing/),
        });
      } finally {
        await h.driver.query('DROP TRIGGER audit_refuse ON mrtr_audit');
      }
      expect(await h.exists('svc_rollback')).toBe(true);
      expect(await h.claimed(nonce)).toBe(false);
      let { json, table, spans } = await h.trailOf(nonce);
      expect(json.map((r) => [r.outcome, r.reason])).toEqual([
        ['asked', undefined],
        ['accepted', undefined],
        ['failed', 'audit_sink_failed'],
      ]);
      expect(table.map(essence)).toEqual(json.map(essence));
      expect(spans.at(-1)?.status.code).toBe(SpanStatusCode.ERROR);
      await accept();
      expect(await h.exists('svc_rollback')).toBe(false);
      ({ json, table } = await h.trailOf(nonce));
      expect(outcomes(table)).toEqual(['asked', 'accepted', 'failed', 'accepted', 'completed']);
      expect(table.map(essence)).toEqual(json.map(essence));
    });

    it('a JSON-lines trail that cannot write accepted stops the round before the claim and the delete', async () => {
      const ticket = await h.ask('svc_diskfull');
      const nonce = nonceOf(h);
      h.trail.failing = true;
      try {
        await expect(
          h.call('svc_diskfull', {
            requestState: ticket,
            answer: { action: 'accept', content: { serviceName: 'api-prod' } },
          }),
        ).rejects.toMatchObject({
          code: -32603,
          message: expect.stringMatching(/^This request changed nothing/),
        });
      } finally {
        h.trail.failing = false;
      }
      expect(await h.exists('svc_diskfull')).toBe(true);
      expect(await h.claimed(nonce)).toBe(false);
      const { json, table } = await h.trailOf(nonce);
      expect(outcomes(json)).toEqual(['asked']);
      expect(table.map((r) => [r.outcome, r.reason])).toEqual([
        ['asked', undefined],
        ['accepted', undefined],
        ['failed', 'audit_sink_failed'],
      ]);
    });
  });
}

scenarios('on PGlite', async () => {
  const db = await PGlite.create();
  return { driver: pgliteDriver(db), close: () => db.close() };
});

scenarios(
  'on the PostgreSQL server (pipelined pool)',
  async () => {
    const pool: pg.Pool = await poolInSchema(schema, 5, true);
    return { driver: pgPoolDriver(pool), close: () => pool.end() };
  },
  !reachable,
);

describe('a PostgreSQL replay store that cannot be reached', () => {
  it('answers -32603 saying nothing was changed, and the trail records the failure', async () => {
    // Port 1: connection refused at once, as with a database that is down.
    const pool = new pg.Pool({
      connectionString: 'postgres://postgres@127.0.0.1:1/none',
      connectionTimeoutMillis: 1000,
    });
    const lines: string[] = [];
    const gate = new ConfirmationGate<SqlQueryable>({
      sealer: new TicketSealer({ keys: [{ kid: 'k1', secret: 'e'.repeat(32) }] }),
      store: new PostgresReplayStore(pgPoolDriver(pool)),
      audit: new JsonLinesAuditSink({ destination: { write: (l) => lines.push(l) } }),
    });
    let deleted = false;
    const request = (extra: { requestState?: string; answer?: unknown } = {}) => ({
      principal: 'alice',
      method: 'tools/call',
      name: 'delete_service',
      arguments: { serviceId: 'svc_1' },
      capabilities: { elicitation: {} },
      requestState: extra.requestState,
      inputResponses: extra.answer ? { confirm: extra.answer } : undefined,
    });
    const spec = {
      key: 'confirm',
      prepare: async () => ({ view: undefined }),
      question: () => ({
        message: 'Delete svc_1?',
        requestedSchema: { type: 'object' as const, properties: {} },
      }),
      consents: () => true,
      perform: async () => {
        deleted = true;
        return textResult('deleted');
      },
    };
    try {
      const first = (await gate.run(request(), spec)) as { requestState: string };
      const error = await gate
        .run(
          request({ requestState: first.requestState, answer: { action: 'accept', content: {} } }),
          spec,
        )
        .catch((e) => e);
      expect(error).toMatchObject({
        code: -32603,
        message: expect.stringMatching(
          /^This request changed nothing.*Retry the same confirmation/,
        ),
      });
      expect(error.cause?.name).toBe('ReplayStoreUnavailableError');
      expect(deleted).toBe(false);
      expect(lines.map((l) => [JSON.parse(l).outcome, JSON.parse(l).reason])).toEqual([
        ['asked', undefined],
        ['accepted', undefined],
        ['failed', 'ReplayStoreUnavailableError'],
      ]);
    } finally {
      await pool.end();
    }
  });
});
