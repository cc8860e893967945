import { tsupConfig } from '../../tsup.base.js';

// `import.meta.url` in the CommonJS build too: the WebAuthn browser bundle is found from it.
export default tsupConfig({ shims: true });
