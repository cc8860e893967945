/**
 * Apps wrap their driver to word its errors for people (the example servers
 * turn a lost connection into an `McpError` whose `cause` is the driver's
 * error). The store must still tell "lost at COMMIT, outcome unknown" from
 * "rolled back": a retry is safe either way, but only the first may have
 * changed something.
 */
import { ReplayStoreUnavailableError } from '@mrtr/replay';
import { ConnectionLostError, type SqlDriver } from '@mrtr/sql';
import { describe, expect, it } from 'vitest';
import { PostgresReplayStore } from '../src/index.js';

function failingWith(error: unknown): SqlDriver {
  return {
    query: async () => ({ rows: [] }),
    transaction: async () => {
      throw error;
    },
  };
}

const request = { nonce: 'n-1', requestDigest: 'sha256:a', expiresAt: Date.now() + 60_000 };
const worded = (cause: unknown) => new Error('the database did not answer', { cause });

describe('PostgresReplayStore behind a driver that rewords its errors', () => {
  it.each([
    ['bare', new ConnectionLostError('08007', { cause: new Error('x') }), true],
    ['wrapped once', worded(new ConnectionLostError('08007', { cause: new Error('x') })), true],
    ['wrapped twice', worded(worded(new ConnectionLostError('08007', { cause: 1 }))), true],
    ['08006, wrapped', worded(new ConnectionLostError('08006', { cause: new Error('x') })), false],
    ['another error', worded(new Error('syntax error')), false],
  ])('%s: outcomeUnknown is %s', async (_, error, unknown) => {
    const store = new PostgresReplayStore(failingWith(error));
    const thrown = await store.once(request, async () => 'done').catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(ReplayStoreUnavailableError);
    expect((thrown as ReplayStoreUnavailableError).outcomeUnknown === true).toBe(unknown);
  });
});
