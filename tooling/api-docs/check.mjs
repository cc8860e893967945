/**
 * The API reference that `build` generated holds a page for every published
 * package of `packages/` (and TypeDoc, run with
 * `--treatValidationWarningsAsErrors`, already refused broken links,
 * undocumented exports and references to symbols left out).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('../..', import.meta.url).pathname;
const published = readdirSync(join(root, 'packages'))
  .map((dir) => JSON.parse(readFileSync(join(root, 'packages', dir, 'package.json'), 'utf8')))
  .filter((manifest) => !manifest.private)
  .map((manifest) => manifest.name);
const page = (name) => new URL(`dist/modules/${name.replace(/[@/]/g, '_')}.html`, import.meta.url);
const missing = published.filter((name) => !existsSync(page(name)));
if (published.length === 0 || missing.length > 0) {
  console.error(
    missing.length
      ? `No API page for ${missing.join(', ')}: add its src/index.ts to tooling/api-docs/typedoc.json (entryPoints and tsconfig.json include), then run npx -y pnpm@12.4.2 --filter @mrtr/api-docs build.`
      : 'No published package found under packages/.',
  );
  process.exit(1);
}
console.log(`API reference: ${published.length} packages in tooling/api-docs/dist/index.html`);
