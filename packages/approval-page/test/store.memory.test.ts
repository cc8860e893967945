import { MemoryApprovalStore } from '../src/index.js';
import { describeApprovalStoreContract } from './store-contract.js';

describeApprovalStoreContract('MemoryApprovalStore', {
  open: () => new MemoryApprovalStore(),
  shared: false,
  sweeps: true,
});
