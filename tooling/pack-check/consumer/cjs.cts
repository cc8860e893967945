import { gatedDelete } from './flow.cjs';

gatedDelete('cjs').catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
