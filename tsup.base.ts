/**
 * The one tsup configuration of the workspace: every package's and app's
 * `tsup.config.ts` is `export default tsupConfig({ …what differs })`.
 *
 * Defaults, for a published package: `src/index.ts` as ESM and CommonJS,
 * with type declarations for both, source maps, for Node 20, `dist/` cleaned
 * first. Private packages and apps override `format` (ESM only) and `dts`.
 */
import { defineConfig, type Options } from 'tsup';

/** What every build shares unless a package says otherwise. */
export const TSUP_DEFAULTS = {
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node20',
} satisfies Options;

/**
 * The tsup configuration of one package: {@link TSUP_DEFAULTS} with
 * `overrides` on top (shallow: an `entry` given replaces the default one).
 */
export function tsupConfig(overrides: Options = {}) {
  return defineConfig({ ...TSUP_DEFAULTS, ...overrides });
}
