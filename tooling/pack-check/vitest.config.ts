import { defineConfig } from 'vitest/config';

// Pack once (test/pack.setup.ts), then check the tarballs file by file, in
// order. Installing from the registry and compiling take tens of seconds,
// hence the long timeouts.
export default defineConfig({
  test: {
    globalSetup: ['test/pack.setup.ts'],
    testTimeout: 240_000,
    hookTimeout: 240_000,
    fileParallelism: false,
  },
});
