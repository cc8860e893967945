import { describeReplayStoreContract } from '../src/contract-tests.js';
import { MemoryReplayStore } from '../src/index.js';

describeReplayStoreContract('MemoryReplayStore', {
  open: () => new MemoryReplayStore(),
  instances: 'separate',
  whileRunning: 'in_progress',
});
