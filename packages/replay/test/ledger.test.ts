import { describe, expect, it } from 'vitest';
import { describeReplayStoreContract } from '../src/contract-tests.js';
import { LedgerReplayStore, MemoryReplayStore, type OnceRequest } from '../src/index.js';

describeReplayStoreContract('LedgerReplayStore (memory front, memory ledger)', {
  open: () => new LedgerReplayStore(new MemoryReplayStore(), new MemoryReplayStore()),
  instances: 'separate',
  whileRunning: 'in_progress',
});

const onceRequest = (over: Partial<OnceRequest> = {}): OnceRequest => ({
  nonce: 'n-1',
  requestDigest: 'sha256:same',
  expiresAt: Date.now() + 60_000,
  ...over,
});

describe('LedgerReplayStore when the front store forgets', () => {
  it('replays what the ledger recorded instead of running the action a second time', async () => {
    const ledger = new MemoryReplayStore();
    let runs = 0;
    const action = async () => {
      runs++;
      return { deleted: 'svc_1', run: runs };
    };
    const first = await new LedgerReplayStore(new MemoryReplayStore(), ledger).once(
      onceRequest(),
      action,
    );
    expect(first).toEqual({ status: 'performed', outcome: { deleted: 'svc_1', run: 1 } });
    // A new, empty front store: what a Redis restarted without persistence looks like.
    const forgetful = new LedgerReplayStore(new MemoryReplayStore(), ledger);
    const again = await forgetful.once(onceRequest(), action);
    expect(again).toEqual({ status: 'replayed', outcome: { deleted: 'svc_1', run: 1 } });
    expect(runs).toBe(1);
    // The front store learned the outcome: the next identical presentation stops there.
    expect(await forgetful.front.once(onceRequest(), async () => undefined as never)).toEqual({
      status: 'replayed',
      outcome: { deleted: 'svc_1', run: 1 },
    });
  });

  it('refuses another answer on a used nonce and leaves the front claim released', async () => {
    const ledger = new MemoryReplayStore();
    await new LedgerReplayStore(new MemoryReplayStore(), ledger).once(
      onceRequest(),
      async () => 'done',
    );
    const front = new MemoryReplayStore();
    const forgetful = new LedgerReplayStore(front, ledger);
    let ran = false;
    const other = await forgetful.once(onceRequest({ requestDigest: 'sha256:other' }), async () => {
      ran = true;
      return 'again';
    });
    expect(other).toEqual({ status: 'refused', reason: 'used' });
    expect(ran).toBe(false);
    // Released in front: the front store holds no outcome that never happened.
    expect(
      await front.once(onceRequest({ requestDigest: 'sha256:other' }), async () => 'probe'),
    ).toEqual({
      status: 'performed',
      outcome: 'probe',
    });
  });

  it('releases both claims when the action throws, so a retry may perform', async () => {
    const store = new LedgerReplayStore(new MemoryReplayStore(), new MemoryReplayStore());
    await expect(
      store.once(onceRequest(), async () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await store.once(onceRequest(), async () => 'ok')).toEqual({
      status: 'performed',
      outcome: 'ok',
    });
  });
});
