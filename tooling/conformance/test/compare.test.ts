import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  judge,
  parseExpectedFailures,
  type RequirementSet,
  scenarioOfFolder,
  scenarioResult,
  serverRequirements,
} from '../src/compare.js';

const set: RequirementSet = {
  revision: '2026-07-28',
  scored: ['a', 'b', 'c'],
  notScored: [{ scenario: 'x', reason: 'extension' }],
};
const pass = (s: string) => scenarioResult(s, [{ id: s, status: 'SUCCESS' }]);
const failing = (s: string) =>
  scenarioResult(s, [{ id: `${s}-check`, status: 'FAILURE', errorMessage: 'nope' }]);

describe('scenarioResult', () => {
  it('passes with warnings, fails on any FAILURE, and fails when the scenario never ran', () => {
    expect(
      scenarioResult('a', [
        { id: '1', status: 'SUCCESS' },
        { id: '2', status: 'WARNING' },
      ]).passed,
    ).toBe(true);
    expect(failing('a')).toEqual({
      scenario: 'a',
      ran: true,
      passed: false,
      failures: ['a-check: nope'],
    });
    expect(scenarioResult('a', undefined)).toEqual({
      scenario: 'a',
      ran: false,
      passed: false,
      failures: ['did not run'],
    });
  });
});

describe('judge', () => {
  it('is ok when everything passes, and counts scored and not-scored apart', () => {
    const v = judge(
      set,
      [pass('a'), pass('b'), pass('c'), failing('x')],
      [{ scenario: 'x', reason: 'the tasks extension is not implemented' }],
    );
    expect(v).toMatchObject({
      ok: true,
      scored: { passed: 3, total: 3 },
      notScored: { passed: 0, total: 1 },
    });
    expect(v.expected.map((e) => e.scenario)).toEqual(['x']);
  });

  it('fails on an unexpected failure, including a scenario that did not run', () => {
    const v = judge(set, [pass('a'), failing('b'), pass('x')], []);
    expect(v.ok).toBe(false);
    expect(v.unexpected.map((u) => u.scenario)).toEqual(['b', 'c']);
    expect(v.scored).toEqual({ passed: 1, total: 3 });
  });

  it('fails on a stale entry: listed but passing, or not in the set', () => {
    const v = judge(
      set,
      [pass('a'), pass('b'), pass('c'), pass('x')],
      [
        { scenario: 'a', reason: 'used to fail for some reason' },
        { scenario: 'gone', reason: 'a scenario that was renamed' },
      ],
    );
    expect(v.ok).toBe(false);
    expect(v.stale.map((s) => s.scenario)).toEqual(['a', 'gone']);
    expect(v.unexpected).toEqual([]);
  });
});

describe('expected-failures.yaml', () => {
  it('needs a scenario and a real reason for every entry, each once', () => {
    expect(parseExpectedFailures('server: []')).toEqual([]);
    expect(parseExpectedFailures('')).toEqual([]);
    expect(
      parseExpectedFailures(
        'server:\n  - scenario: x\n    reason: "the tasks extension is not implemented"\n',
      ),
    ).toEqual([{ scenario: 'x', reason: 'the tasks extension is not implemented' }]);
    expect(() => parseExpectedFailures('server:\n  - scenario: x\n')).toThrow(/reason/);
    expect(() => parseExpectedFailures('server:\n  - scenario: x\n    reason: todo\n')).toThrow(
      /reason/,
    );
    expect(() => parseExpectedFailures('server:\n  - reason: "a long enough reason"\n')).toThrow(
      /scenario/,
    );
    expect(() =>
      parseExpectedFailures(
        'server:\n  - {scenario: x, reason: "a long enough reason"}\n  - {scenario: x, reason: "a long enough reason"}\n',
      ),
    ).toThrow(/twice/);
  });

  it('the committed file parses', () => {
    const text = readFileSync(join(import.meta.dirname, '..', 'expected-failures.yaml'), 'utf8');
    expect(() => parseExpectedFailures(text)).not.toThrow();
  });
});

describe('the pinned suite', () => {
  const require = createRequire(import.meta.url);
  const dir = dirname(require.resolve('@modelcontextprotocol/conformance/package.json'));

  it('is 0.2.0-alpha.12, and its 2026-07-28 server set holds the scenarios we must pass', () => {
    expect(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version).toBe(
      '0.2.0-alpha.12',
    );
    const required = serverRequirements(
      '2026-07-28',
      readFileSync(join(dir, 'requirements', '2026-07-28.yaml'), 'utf8'),
    );
    const irr = required.scored.filter((s) => s.startsWith('input-required-result-'));
    expect(irr).toHaveLength(14);
    for (const s of [
      'server-stateless',
      'tools-list',
      'tools-call-error',
      'dns-rebinding-protection',
      'caching',
    ])
      expect(required.scored).toContain(s);
  });

  it('names result folders server-<scenario>-<time>', () => {
    expect(
      scenarioOfFolder('server-input-required-result-basic-elicitation-2026-11-30T06-08-28-123Z'),
    ).toBe('input-required-result-basic-elicitation');
    expect(scenarioOfFolder('client-x-2026-11-30T06-08-28-123Z')).toBeUndefined();
    expect(scenarioOfFolder('server-x')).toBeUndefined();
  });
});
