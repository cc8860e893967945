/**
 * A benchmark's TypeScript entry as one JavaScript file in `.servers/`
 * (esbuild, packages left to resolve from `node_modules`), run with plain
 * `node` as in production: not under tsx, whose loader adds ~35 MB of RSS to
 * every process and whose transform wraps every function made at run time in
 * a `__name` call (a few per cent of a server's CPU, more for a server that
 * makes closures per request).
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const src = dirname(fileURLToPath(import.meta.url));

/**
 * Compile `src/<entry>` (e.g. `servers/ours.ts`) to `.servers/<out>.js`.
 * @returns the path of the JavaScript file.
 */
export async function compileEntry(entry: string, out: string): Promise<string> {
  const outfile = join(src, '..', '.servers', `${out}.js`);
  await build({
    entryPoints: [join(src, entry)],
    outfile,
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'warning',
  });
  return outfile;
}
