import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/main.ts', 'src/app.ts'],
  format: ['esm'],
  dts: { entry: 'src/app.ts' },
  clean: true,
  sourcemap: true,
  target: 'node20',
});
