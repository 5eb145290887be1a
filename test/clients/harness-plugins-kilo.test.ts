import { pluginSuite } from '../harness/plugin-suite.js';

/** kilo for real (the scenario: test/harness/plugin-suite.ts; Cline is in harness-plugins.test.ts). */
pluginSuite(['kilo']);
