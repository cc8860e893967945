import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts', 'src/adapter-contract-tests.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node20',
  // The contract suite runs inside the caller's vitest; never bundle it.
  external: ['vitest'],
});
