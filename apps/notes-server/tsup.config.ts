import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/main.ts', 'src/sdk-main.ts', 'src/demo.ts'],
  format: ['esm'],
  clean: true,
  sourcemap: true,
  target: 'node20',
});
