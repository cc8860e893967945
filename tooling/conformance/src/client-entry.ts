/**
 * The client the official conformance suite launches in client mode
 * (`conformance client --command "<this>" --scenario <name>`): `@mrtr/client`
 * driven through what each 2026-07-28 client scenario asks of a client.
 *
 * The suite appends the scenario server's URL as the last argument and sets
 * `MCP_CONFORMANCE_SCENARIO`, `MCP_CONFORMANCE_PROTOCOL_VERSION` and, for some
 * scenarios, `MCP_CONFORMANCE_CONTEXT` (JSON). Exit codes: 0 the scenario's
 * steps ran, 1 a step failed (the error is printed), 2 this entry cannot run
 * the scenario (unknown name, another protocol version, no URL).
 *
 * The steps of each scenario, and the answerer standing in for the person,
 * are in client-steps.ts.
 */
import { McpClient } from '@mrtr/client';
import { PROTOCOL_VERSION } from '@mrtr/wire';
import { referee, scenarioSteps } from './client-steps.js';

const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const url = process.argv.at(-1) ?? '';

function stop(message: string): never {
  console.error(`conformance client: ${message}`);
  process.exit(2);
}

const client = new McpClient({
  url,
  answerer: referee,
  clientInfo: { name: 'mrtr-conformance-client', version: '0.0.0' },
});
const steps = scenarioSteps(client);

async function main() {
  const step = steps[scenario];
  if (!step) stop(`no steps for scenario "${scenario}"`);
  const version = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION;
  if (version !== undefined && version !== PROTOCOL_VERSION)
    stop(`@mrtr/client speaks ${PROTOCOL_VERSION} only, not ${version}`);
  if (!/^https?:\/\//.test(url)) stop(`the last argument is not the server URL: "${url}"`);
  await client.discover();
  const { tools, rejected } = await client.listTools();
  for (const r of rejected) console.log(`left out tool ${r.name}: ${r.reason}`);
  await step(tools);
  console.log(`${scenario}: done`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});
