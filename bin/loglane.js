#!/usr/bin/env node
// The `loglane` command. The TypeScript sources are compiled to dist/ by `npm install` (prepare).
import('../dist/cli.js').catch((err) => {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND') {
    console.error('loglane: dist/ is missing; run `npm run build` (or `npm install`) first.');
    process.exit(1);
  }
  throw err;
});
