// Every published entry point resolves with types from an ES module.
import type * as approvalPage from '@mrtr/approval-page';
import type * as audit from '@mrtr/audit';
import type * as auditPostgres from '@mrtr/audit-postgres';
import type * as client from '@mrtr/client';
import type * as digest from '@mrtr/digest';
import type * as express from '@mrtr/express';
import type * as gate from '@mrtr/gate';
import type * as hono from '@mrtr/hono';
import type * as node from '@mrtr/node';
import type * as receipt from '@mrtr/receipt';
import type * as replay from '@mrtr/replay';
import type * as replayPostgres from '@mrtr/replay-postgres';
import type * as replayRedis from '@mrtr/replay-redis';
import type * as sdk from '@mrtr/sdk';
import type * as server from '@mrtr/server';
import type * as sql from '@mrtr/sql';
import type * as ticket from '@mrtr/ticket';
import type * as wire from '@mrtr/wire';

export type Entries = [
  typeof approvalPage.createApprovalPage,
  typeof audit,
  typeof auditPostgres,
  typeof client.McpClient,
  typeof digest,
  typeof express,
  typeof gate.ConfirmationGate,
  typeof hono,
  typeof node.toNodeHandler,
  typeof receipt,
  typeof replay.MemoryReplayStore,
  typeof replayPostgres,
  typeof replayRedis.RedisReplayStore,
  typeof sdk,
  typeof server.createMcpEndpoint,
  typeof sql,
  typeof ticket.TicketSealer,
  typeof wire.textResult,
];
