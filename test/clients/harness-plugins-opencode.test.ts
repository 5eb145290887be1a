import { pluginSuite } from '../harness/plugin-suite.js';

/** opencode for real (the scenario: test/harness/plugin-suite.ts; Cline is in harness-plugins.test.ts). */
pluginSuite(['opencode']);
