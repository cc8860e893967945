import { tsupConfig } from '../../tsup.base.js';

export default tsupConfig({
  entry: ['src/index.ts', 'src/adapter-contract-tests.ts'],
  // The contract suite runs inside the caller's vitest; never bundle it.
  external: ['vitest'],
});
