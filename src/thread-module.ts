import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

/**
 * A worker thread's module beside the module at `from` (its import.meta.url), by its path without
 * extension: `.js` when running from dist/, `.ts` when the TypeScript sources run (vitest, tsx).
 * Node 20 does not hand a worker the parent's module hooks, so for a `.ts` module the thread
 * registers tsx itself before loading it; the built server never needs tsx.
 */
export function threadModule(from: string, path: string): { url: URL; execArgv: string[] } {
  const ext = new URL(from).pathname.endsWith('.ts') ? '.ts' : '.js';
  const url = new URL(`${path}${ext}`, from);
  if (ext === '.js') return { url, execArgv: [] };
  // tsx's ESM entry (its package exports map `import` to index.mjs beside the CommonJS index.cjs).
  const tsx = pathToFileURL(createRequire(from).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href;
  return { url, execArgv: ['--import', `data:text/javascript,import { register } from ${JSON.stringify(tsx)}; register();`] };
}
