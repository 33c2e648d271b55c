#!/usr/bin/env node
// `npm run setup`: make this checkout ready to build, test and run. Idempotent and fast when
// nothing is missing. Steps: Node.js version, npm dependencies, the pinned Temporal CLI,
// Chromium for the browser tests, the pinned Schemathesis for the API fuzzer, the pinned xmlschema
// for the goAML report tests.
// Plain Node ESM with no npm dependencies: it runs before `npm install`.

import { exitWithError, loadDotEnv, runSetup } from './lib.mjs';

try {
  loadDotEnv();
  runSetup({ tag: 'setup' });
} catch (err) {
  exitWithError('setup', err);
}
