#!/usr/bin/env node
// Runs the built CLI bundle (npm run build creates out/main/cli.js).
const { existsSync } = require('node:fs');
const { join } = require('node:path');
const bundle = join(__dirname, '..', 'out', 'main', 'cli.js');
if (!existsSync(bundle)) {
  process.stderr.write('pd-console: not built yet — run `npm run build` in ' + join(__dirname, '..') + '\n');
  process.exit(1);
}
require(bundle).cliMain();
