import type { GateRequest } from '@mrtr/gate';
import { PRINCIPAL, seedRecords, TOOL, WORKSPACE } from './flow/common.js';
import { gatedDelete } from './servers/ours-endpoint.js';
const { gate, spec } = gatedDelete(seedRecords());
const base: Omit<GateRequest, 'requestState' | 'inputResponses'> = { principal: { id: PRINCIPAL }, method: 'tools/call', name: TOOL, arguments: { workspace: WORKSPACE }, capabilities: { elicitation: { form: {} } } };
async function flow() {
  const asked = await gate.run({ ...base, requestState: undefined, inputResponses: undefined }, spec(WORKSPACE));
  if (asked.resultType !== 'input_required' || !asked.requestState) throw new Error('no ask');
  const done = await gate.run({ ...base, requestState: asked.requestState, inputResponses: { confirm_delete: { action: 'accept', content: { record_id: 'rec-03', confirm: true } } } }, spec(WORKSPACE));
  if (done.resultType === 'input_required' || done.isError) throw new Error('no completion');
}
const n = Number(process.argv[2] ?? 100000);
for (let i = 0; i < 5000; i++) await flow();
const c0 = process.cpuUsage();
const C = Number(process.argv[3] ?? 1); await Promise.all(Array.from({ length: C }, async () => { for (let i = 0; i < n / C; i++) await flow(); }));
const c = process.cpuUsage(c0); console.log(`${((c.user + c.system) / n).toFixed(1)} µs/flow`);
