import { describe, expect, it } from 'vitest';
import { ConnectionLostError, isConnectionError, sqlTableName } from '../src/index.js';

describe('sqlTableName', () => {
  it('quotes a name and a schema-qualified name', () => {
    expect(sqlTableName('mrtr_replay')).toMatchObject({
      sql: '"mrtr_replay"',
      bare: 'mrtr_replay',
    });
    expect(sqlTableName('ops.audit_2')).toMatchObject({ sql: '"ops"."audit_2"', bare: 'audit_2' });
  });

  it('names indexes within 63 bytes, apart from the table and from each other', () => {
    expect(sqlTableName('ops.mrtr_replay').index('expires_at')).toBe('"mrtr_replay_expires_at"');
    // PostgreSQL cuts names past 63 bytes: these two would both have become the table's own name.
    const long = 'a'.repeat(63);
    const nonce = sqlTableName(long).index('nonce');
    const recorded = sqlTableName(long).index('recorded_at');
    for (const name of [nonce, recorded]) {
      expect(name.length - 2).toBeLessThanOrEqual(63);
      expect(name).not.toBe(`"${long}"`);
    }
    expect(nonce).not.toBe(recorded);
    expect(nonce.endsWith('_nonce"')).toBe(true);
    // Two long names with the same first characters get different index names.
    expect(sqlTableName(`${'b'.repeat(60)}_x1`).index('expires_at')).not.toBe(
      sqlTableName(`${'b'.repeat(60)}_x2`).index('expires_at'),
    );
    expect(() => sqlTableName('t').index('Bad"')).toThrow(TypeError);
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
