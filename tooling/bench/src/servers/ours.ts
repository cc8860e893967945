/**
 * The flow benchmark's server on this project's stack: `@mrtr/server` mounted
 * with `@mrtr/node`, the tool guarded by `@mrtr/gate` (see
 * `ours-endpoint.ts`). Run as a child process by `../flow.ts`; reports its
 * port over IPC.
 */
import { toNodeHandler } from '@mrtr/node';
import { seedRecords, serveChild } from '../flow/common.js';
import { oursEndpoint } from './ours-endpoint.js';

await serveChild(toNodeHandler(oursEndpoint(seedRecords()), { path: '/mcp' }));
