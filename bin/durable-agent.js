#!/usr/bin/env node
'use strict';
const path = require('node:path');
const fs = require('node:fs');

const entry = path.join(__dirname, '..', 'dist', 'src', 'cli', 'main.js');
if (!fs.existsSync(entry)) {
  process.stderr.write(
    `durable-agent is not built yet: run 'npm run setup' (or 'npm run build') in ${path.dirname(__dirname)}\n`,
  );
  process.exit(1);
}
require(entry).runCli(process.argv.slice(2));
