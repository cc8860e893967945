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

describe('LedgerReplayStore when a front claim outlived its process', () => {
  /** A front store holding a claim of `request` whose action never ends: a process that died mid-claim. */
  async function frontWithDeadClaim(request: OnceRequest) {
    const front = new MemoryReplayStore();
    void front.once(request, () => new Promise<never>(() => {}));
    expect(await front.once(request, async () => 'probe')).toEqual({
      status: 'refused',
      reason: 'in_progress',
    });
    return front;
  }

  it('the ledger committed before the process died: a re-send gets the recorded outcome, not in_progress', async () => {
    const request = onceRequest({ nonce: 'n-dead-after-commit' });
    const ledger = new MemoryReplayStore();
    await ledger.once(request, async () => ({ deleted: 'svc_1' }));
    const store = new LedgerReplayStore(await frontWithDeadClaim(request), ledger);
    let ran = false;
    const action = async () => {
      ran = true;
      return { deleted: 'again' };
    };
    expect(await store.once(request, action)).toEqual({
      status: 'replayed',
      outcome: { deleted: 'svc_1' },
    });
    expect(ran).toBe(false);
  });

  it('the process died before the ledger committed: still in_progress, nothing runs', async () => {
    const request = onceRequest({ nonce: 'n-dead-before-commit' });
    const ledger = new MemoryReplayStore();
    const store = new LedgerReplayStore(await frontWithDeadClaim(request), ledger);
    let ran = false;
    expect(
      await store.once(request, async () => {
        ran = true;
        return 'ran';
      }),
    ).toEqual({ status: 'refused', reason: 'in_progress' });
    expect(ran).toBe(false);
    expect(await ledger.recorded(request)).toBeUndefined();
  });

  it('a ledger that cannot be read leaves the answer in_progress', async () => {
    const request = onceRequest({ nonce: 'n-ledger-down' });
    const ledger = new MemoryReplayStore();
    ledger.recorded = async () => {
      throw new Error('ledger unreachable');
    };
    const store = new LedgerReplayStore(await frontWithDeadClaim(request), ledger);
    expect(await store.once(request, async () => 'ran')).toEqual({
      status: 'refused',
      reason: 'in_progress',
    });
  });
});

describe('LedgerReplayStore.recorded', () => {
  it("reads the ledger's record, not the front store's; undefined when the ledger has no recorded", async () => {
    const request = onceRequest({ nonce: 'n-ledger-recorded' });
    const ledger = new MemoryReplayStore();
    const front = new MemoryReplayStore();
    const store = new LedgerReplayStore(front, ledger);
    expect(await store.recorded(request)).toBeUndefined();
    await ledger.once(request, async () => 'done');
    // The front store never saw it (a Redis that forgot): the ledger's record answers.
    expect(await store.recorded(request)).toEqual({ status: 'replayed', outcome: 'done' });
    expect(await store.recorded({ ...request, requestDigest: 'sha256:other' })).toEqual({
      status: 'refused',
      reason: 'used',
    });
    const blind = new MemoryReplayStore();
    (blind as { recorded?: unknown }).recorded = undefined;
    expect(await new LedgerReplayStore(front, blind).recorded(request)).toBeUndefined();
  });
});

describe('MemoryReplayStore.recorded', () => {
  it('reads a settled entry without claiming: replayed for the same answer, used for another, nothing otherwise', async () => {
    const store = new MemoryReplayStore();
    const request = onceRequest({ nonce: 'n-read' });
    expect(await store.recorded(request)).toBeUndefined();
    await store.once(request, async () => 'done');
    expect(await store.recorded(request)).toEqual({ status: 'replayed', outcome: 'done' });
    expect(await store.recorded({ ...request, requestDigest: 'sha256:other' })).toEqual({
      status: 'refused',
      reason: 'used',
    });
    const expired = onceRequest({ nonce: 'n-expired', expiresAt: Date.now() - 1 });
    await store.once(expired, async () => 'done');
    expect(await store.recorded(expired)).toBeUndefined();
    await expect(store.recorded({ ...request, nonce: '' })).rejects.toThrow(TypeError);
  });
});
