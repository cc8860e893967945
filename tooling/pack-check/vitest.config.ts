import { defineConfig } from 'vitest/config';

// One file, run in order: pack once, then check the tarballs. Installing from
// the registry and compiling take tens of seconds, hence the long timeouts.
export default defineConfig({
  test: { testTimeout: 240_000, hookTimeout: 240_000, fileParallelism: false },
});
