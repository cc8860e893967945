import { tsupConfig } from '../../tsup.base.js';

export default tsupConfig();
