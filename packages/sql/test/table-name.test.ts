import { describe, expect, it } from 'vitest';
import { ConnectionLostError, isConnectionError, sqlTableName } from '../src/index.js';

describe('sqlTableName', () => {
  it('quotes a name and a schema-qualified name', () => {
    expect(sqlTableName('mrtr_replay')).toEqual({ sql: '"mrtr_replay"', bare: 'mrtr_replay' });
    expect(sqlTableName('ops.audit_2')).toEqual({ sql: '"ops"."audit_2"', bare: 'audit_2' });
  });

  it.each([
    '',
    'Upper',
    'no spaces',
    'a.b.c',
    'x"; DROP TABLE t; --',
    '1starts_with_digit',
    'n'.repeat(64),
    'ops.',
  ])('refuses %j with TypeError', (table) => {
    expect(() => sqlTableName(table)).toThrow(TypeError);
  });
});

describe('ConnectionLostError', () => {
  it('is recognised by brand, as an error of another copy of this package would be', () => {
    const foreign = new Error('lost');
    Object.defineProperty(foreign, Symbol.for('@mrtr/sql/ConnectionLostError'), { value: true });
    expect(foreign).toBeInstanceOf(ConnectionLostError);
    expect(isConnectionError(foreign)).toBe(true);
    expect(new Error('lost')).not.toBeInstanceOf(ConnectionLostError);
    const own = new ConnectionLostError('08006', { cause: new Error('x') });
    expect(own).toBeInstanceOf(ConnectionLostError);
    expect(own.code).toBe('08006');
  });
});
