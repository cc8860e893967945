import { tsupConfig } from '../../tsup.base.js';

export default tsupConfig({
  entry: ['src/main.ts', 'src/sdk-main.ts', 'src/demo.ts'],
  format: ['esm'],
  dts: false,
});
