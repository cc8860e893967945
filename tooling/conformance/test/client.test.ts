import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { McpClient } from '@mrtr/client';
import { describe, expect, it } from 'vitest';
import { clientScenarioResult, planClientRun } from '../src/client-compare.js';
import { scenarioSteps } from '../src/client-steps.js';
import { parseExpectedFailures, parseNotRun, requirements } from '../src/compare.js';
import { requirementsYaml } from '../src/suite.js';

const set = {
  revision: '2026-07-28',
  scored: ['tools_call', 'auth/a', 'auth/b'],
  notScored: [
    { scenario: 'auth/x', reason: 'extension' },
    { scenario: 'preservation', reason: 'added-after-release' },
  ],
};
const oauth = { prefix: 'auth/', reason: 'OAuth is not part of this client' };

describe('planClientRun', () => {
  it('runs every scenario of the set that no not-run entry covers, scored and not scored', () => {
    expect(planClientRun(set, [oauth])).toEqual({
      run: ['tools_call', 'preservation'],
      notRun: ['auth/a', 'auth/b', 'auth/x'].map((scenario) => ({
        scenario,
        reason: oauth.reason,
      })),
      stale: [],
    });
  });

  it('marks a not-run entry that covers nothing as stale, and refuses one scenario both not run and expected to fail', () => {
    const gone = { scenario: 'renamed', reason: 'a scenario that no longer exists' };
    expect(planClientRun(set, [oauth, gone]).stale).toEqual([gone]);
    expect(() => planClientRun(set, [oauth], [{ scenario: 'auth/a' }])).toThrow(
      /both not run and an expected failure/,
    );
  });
});

describe('clientScenarioResult: the suite’s single-scenario verdict', () => {
  const ok = [{ id: 'a', status: 'SUCCESS' }];
  it('passes when the suite exits 0', () => {
    expect(clientScenarioResult('s', ok, { suiteExit: 0, output: '' })).toEqual({
      scenario: 's',
      ran: true,
      passed: true,
      failures: [],
    });
  });

  it('fails on a warning, a client that exited non-zero or timed out, naming each', () => {
    const r = clientScenarioResult(
      's',
      [
        ...ok,
        { id: 'retry', status: 'WARNING', description: 'Client retries with a supported version' },
      ],
      { suiteExit: 1, output: 'Client exited with code 1\nClient timed out after 30000ms' },
    );
    expect(r.passed).toBe(false);
    expect(r.failures).toEqual([
      'retry: (warning) Client retries with a supported version',
      'the client exited with code 1',
      'the client timed out after 30000 ms',
    ]);
    expect(clientScenarioResult('s', ok, { suiteExit: 1, output: '' }).failures).toEqual([
      'the suite exited 1',
    ]);
    expect(clientScenarioResult('s', undefined, { suiteExit: 1, output: '' })).toMatchObject({
      ran: false,
      passed: false,
    });
  });
});

describe('expected-failures.yaml, client lists', () => {
  it('reads client: and client-not-run:, each entry with a reason', () => {
    const text =
      'client:\n  - {scenario: x, reason: "fails for a stated reason"}\nclient-not-run:\n  - {prefix: auth/, reason: "OAuth is not part of the client"}\n';
    expect(parseExpectedFailures(text, 'client')).toEqual([
      { scenario: 'x', reason: 'fails for a stated reason' },
    ]);
    expect(parseExpectedFailures(text)).toEqual([]);
    expect(parseNotRun(text)).toEqual([
      { prefix: 'auth/', reason: 'OAuth is not part of the client' },
    ]);
    expect(() => parseNotRun('client-not-run:\n  - {prefix: auth/}\n')).toThrow(/reason/);
    expect(() => parseNotRun('client-not-run:\n  - {reason: "a long enough reason"}\n')).toThrow(
      /no scenario/,
    );
    expect(() =>
      parseExpectedFailures('client:\n  - {prefix: a, reason: "a long enough reason"}\n', 'client'),
    ).toThrow(/no scenario/);
  });

  it('the committed file runs every non-OAuth client scenario of 2026-07-28, and the entry has steps for each', () => {
    const text = readFileSync(join(import.meta.dirname, '..', 'expected-failures.yaml'), 'utf8');
    const clientSet = requirements('2026-07-28', requirementsYaml('2026-07-28'), 'client');
    const plan = planClientRun(clientSet, parseNotRun(text), parseExpectedFailures(text, 'client'));
    expect(plan.stale).toEqual([]);
    expect(plan.notRun.every((n) => n.scenario.startsWith('auth/'))).toBe(true);
    expect(plan.run.sort()).toEqual(
      [
        'http-custom-headers',
        'http-invalid-tool-headers',
        'http-standard-headers',
        'json-schema-2020-12-preservation',
        'json-schema-ref-no-deref',
        'request-metadata',
        'sep-2322-client-request-state',
        'tools_call',
      ].sort(),
    );
    const steps = scenarioSteps(new McpClient({ url: 'http://127.0.0.1:9/mcp' }));
    expect(Object.keys(steps).sort()).toEqual(plan.run);
  });
});
