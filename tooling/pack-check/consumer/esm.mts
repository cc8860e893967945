import { gatedDelete } from './flow.mjs';

await gatedDelete('esm');
