#!/usr/bin/env node
// The `coderag` command: the bundled CLI (built by `npm run build`, which `npm ci` runs via prepare).
require('../dist/cli.js');
