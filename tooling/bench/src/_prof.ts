import type { GateRequest } from '@mrtr/gate';
import { PRINCIPAL, seedRecords, TOOL, WORKSPACE } from './flow/common.js';
import { gatedDelete } from './servers/ours-endpoint.js';
const { gate, spec } = gatedDelete(seedRecords());
const base: Omit<GateRequest, 'requestState' | 'inputResponses'> = { principal: { id: PRINCIPAL }, method: 'tools/call', name: TOOL, arguments: { workspace: WORKSPACE }, capabilities: { elicitation: { form: {} } } };
const flow = async () => {
  const asked = await gate.run(Object.assign({}, base, { requestState: undefined, inputResponses: undefined }), spec(WORKSPACE));
  if (asked.resultType !== 'input_required' || !asked.requestState) throw new Error('no ask');
  const done = await gate.run(Object.assign({}, base, { requestState: asked.requestState, inputResponses: { confirm_delete: { action: 'accept', content: { record_id: 'rec-03', confirm: true } } } }), spec(WORKSPACE));
  if (done.resultType === 'input_required' || done.isError) throw new Error('no completion');
};
const t0 = performance.now(); let n = 0; const c0 = process.cpuUsage();
while (performance.now() - t0 < Number(process.env.MS ?? 6000)) { await flow(); n++; }
const u = process.cpuUsage(c0); console.log('µs/flow', ((u.user + u.system) / n).toFixed(1), n);
