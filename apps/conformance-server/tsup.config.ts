import { tsupConfig } from '../../tsup.base.js';

export default tsupConfig({
  entry: ['src/main.ts', 'src/app.ts'],
  format: ['esm'],
  dts: { entry: 'src/app.ts' },
});
