import { tsupConfig } from '../../tsup.base.js';

export default tsupConfig({
  entry: ['src/index.ts', 'src/browser.ts'],
  format: ['esm'],
});
