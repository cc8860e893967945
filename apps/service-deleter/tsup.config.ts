import { tsupConfig } from '../../tsup.base.js';

export default tsupConfig({
  entry: ['src/main.ts'],
  format: ['esm'],
  dts: false,
});
