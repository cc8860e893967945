// After tsup: the CommonJS declarations (dist/*.d.cts) import types from jose,
// an ES module only. TypeScript refuses that in a CommonJS file under
// `module: node16` (TS1479, TS1542) unless the import is type-only and says
// `resolution-mode: import` (TypeScript ≥ 5.3). Rewrite those imports so.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The ES-module-only packages whose types the declarations import. */
const ESM_ONLY = ['jose'];
const dist = new URL('../dist/', import.meta.url).pathname;
let rewritten = 0;
for (const file of readdirSync(dist).filter((f) => f.endsWith('.d.cts'))) {
  const path = join(dist, file);
  const before = readFileSync(path, 'utf8');
  const after = before.replace(
    /^import (?:type )?(\{[^}]*\}) from '([^']+)';$/gm,
    (line, names, from) =>
      ESM_ONLY.includes(from)
        ? `import type ${names} from '${from}' with { 'resolution-mode': 'import' };`
        : line,
  );
  if (after !== before) {
    writeFileSync(path, after);
    rewritten++;
  }
}
if (rewritten === 0)
  throw new Error('esm-type-imports: no .d.cts file imports jose; is this step still needed?');
