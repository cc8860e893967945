import { describe, expect, it } from 'vitest';
import { isUnreachable, untilReachable } from '../src/reachable.js';

const refused = () =>
  Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), {
    code: 'ECONNREFUSED',
    syscall: 'connect',
  });

describe('untilReachable', () => {
  it('tries again while the service cannot be reached, waiting longer each time up to 5 s', async () => {
    const lines: string[] = [];
    const waits: number[] = [];
    let attempts = 0;
    const value = await untilReachable(
      'PostgreSQL at localhost/app',
      async () => {
        attempts++;
        if (attempts < 6) throw refused();
        return 'up';
      },
      { log: (l) => lines.push(l), sleep: async (ms) => void waits.push(ms) },
    );
    expect(value).toBe('up');
    expect(waits).toEqual([500, 1000, 2000, 4000, 5000]);
    expect(lines[0]).toBe(
      'PostgreSQL at localhost/app is not reachable yet (connect ECONNREFUSED 127.0.0.1:5432); trying again in 0.5 s',
    );
  });

  it('throws at once what is no outage, and the last outage after giveUpAfterMs', async () => {
    // As node-postgres reports it: a FATAL refusal of the session, with its SQLSTATE.
    const wrong = Object.assign(new Error('password authentication failed for user "app"'), {
      code: '28P01',
      severity: 'FATAL',
    });
    let attempts = 0;
    await expect(
      untilReachable('PostgreSQL', async () => {
        attempts++;
        throw wrong;
      }),
    ).rejects.toBe(wrong);
    expect(attempts).toBe(1);
    // The other refusals a server's configuration decides: waiting changes none of them.
    for (const refusal of [
      Object.assign(new Error('database "app" does not exist'), {
        code: '3D000',
        severity: 'FATAL',
      }),
      Object.assign(new Error('role "app" does not exist'), { code: '28000', severity: 'FATAL' }),
      // A server in another language: its severity is localized, the routine is not.
      Object.assign(new Error('x'), { code: '3D000', severity: 'ВАЖНО', routine: 'InitPostgres' }),
      Object.assign(new Error('x'), { code: '28P01', severity: 'FATALE', file: 'auth.c' }),
      new Error('The server does not support SSL connections'),
    ])
      expect(isUnreachable(refusal), refusal.message).toBe(false);
    await expect(
      untilReachable(
        'Redis',
        async () => {
          throw Object.assign(new Error('Redis replay store unreachable: Connection is closed.'), {
            name: 'ReplayStoreUnavailableError',
          });
        },
        { log: () => {}, sleep: async () => {}, giveUpAfterMs: 1_000 },
      ),
    ).rejects.toThrow('Redis replay store unreachable');
  });

  it('reads a refused connection, a lost one and a replay store out of reach as unreachable', () => {
    expect(isUnreachable(refused())).toBe(true);
    expect(isUnreachable(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isUnreachable(new Error('DATABASE_URL must be unset, memory:// or postgres://…'))).toBe(
      false,
    );
    expect(isUnreachable('down')).toBe(false);
  });
});
