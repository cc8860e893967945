/**
 * A diagnostic server: ours (`@mrtr/server` mounted with `@mrtr/node`) with
 * the gate replaced by fixed results of the same shapes, so its distance from
 * `adapter.ts` is the endpoint's cost and its distance from `ours.ts` the
 * gate's. Run as a child process by `../flow.ts` when `BENCH_FLOW_SERVERS`
 * names it; it refuses no `requestState`.
 */
import { toNodeHandler } from '@mrtr/node';
import { seedRecords, serveChild } from '../flow/common.js';
import { oursEndpoint } from './ours-endpoint.js';

await serveChild(toNodeHandler(oursEndpoint(seedRecords(), { canned: true }), { path: '/mcp' }));
