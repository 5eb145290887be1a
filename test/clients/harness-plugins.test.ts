import { pluginSuite } from '../harness/plugin-suite.js';

/**
 * The plugin harnesses for real, one per file so they run at once: Cline CLI
 * here, opencode and Kilo Code in harness-plugins-opencode.test.ts and
 * harness-plugins-kilo.test.ts. The scenario: test/harness/plugin-suite.ts.
 */
pluginSuite(['cline']);
