/**
 * The loop `../instructions.ts` runs under callgrind: `<subject> <flows>`
 * gated flows in process, one after the other, then exit. Subjects:
 * `canned` (the endpoint with the canned tool), `endpoint` (the endpoint with
 * the benchmark's gated tool), `gate` (`ConfirmationGate.run` alone).
 */
import { aeadReady } from '@mrtr/ticket';
import { directFlow, gateFlow } from '../flow/in-process.js';

const subjects = {
  canned: () => directFlow(true),
  endpoint: () => directFlow(false),
  gate: () => gateFlow(),
} as const;

const [name, count] = process.argv.slice(2);
const make = subjects[name as keyof typeof subjects];
const flows = Number(count);
if (!make || !Number.isSafeInteger(flows) || flows < 0)
  throw new Error(`usage: loop.js <${Object.keys(subjects).join('|')}> <flows>`);
// Without it the first tickets would use the OpenSSL fallback (see @mrtr/ticket's aeadReady).
await aeadReady;
const flow = make();
for (let i = 0; i < flows; i++) await flow();
