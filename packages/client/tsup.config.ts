import { readFileSync } from 'node:fs';
import { tsupConfig } from '../../tsup.base.js';

// The default clientInfo names this package's own version, written into the build.
const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));

export default tsupConfig({ define: { __MRTR_CLIENT_VERSION__: JSON.stringify(version) } });
