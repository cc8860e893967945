import { readFileSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

// Tests run the source: give it the version the build writes in (tsup.config.ts).
const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));

export default defineConfig({ define: { __MRTR_CLIENT_VERSION__: JSON.stringify(version) } });
