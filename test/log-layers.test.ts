/**
 * The logs slice (src/features/logs) is built in layers whose imports go one way, so that one part
 * can change without touching the others (the store's format without ingestion, search or the tail):
 *
 *   top (service, routes, schemas, retention)  may import any layer
 *   ingest/, read/, live/                      may import store/ and the shared modules, never each other
 *   store/                                     may import only the shared modules
 *   shared (query/, levels, pattern, regex-runner, present, filter, turns)  import no layer
 *
 * Type-only imports obey the same rule. And no runtime imports go round in a circle anywhere in the
 * slice (type-only ones may, within one layer: they are gone once compiled).
 *
 * This test reads every .ts file under the slice, parses its imports with TypeScript's own parser
 * (import and export-from, `import type`, dynamic `import()`, however they are laid out), and names
 * the file and import that break a rule, or the path of a cycle. It needs no database.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SLICE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src/features/logs');

type Layer = 'top' | 'ingest' | 'store' | 'read' | 'live' | 'shared';

/** The pure modules every layer may use; they themselves import no layer. */
const SHARED_FILES = new Set(['levels.ts', 'pattern.ts', 'regex-runner.ts', 'regex-runner.worker.ts', 'present.ts', 'filter.ts', 'turns.ts']);
/** The slice's face and what composes the layers. */
const TOP_FILES = new Set(['service.ts', 'routes.ts', 'elasticsearch-routes.ts', 'loki-routes.ts', 'hec-routes.ts', 'syslog-listeners.ts', 'schemas.ts', 'retention.ts']);

const MAY_IMPORT: Record<Layer, readonly Layer[]> = {
  top: ['top', 'ingest', 'store', 'read', 'live', 'shared'],
  ingest: ['ingest', 'store', 'shared'],
  read: ['read', 'store', 'shared'],
  live: ['live', 'store', 'shared'],
  store: ['store', 'shared'],
  shared: ['shared'],
};

/** The layer of a file by its path inside the slice ('/'-separated); undefined when it has none yet. */
export function layerOf(file: string): Layer | undefined {
  const [first, ...rest] = file.split('/');
  if (rest.length > 0) {
    if (first === 'query') return 'shared';
    if (first === 'ingest' || first === 'store' || first === 'read' || first === 'live') return first;
    return undefined;
  }
  if (SHARED_FILES.has(file)) return 'shared';
  if (TOP_FILES.has(file)) return 'top';
  return undefined;
}

export interface Import {
  specifier: string;
  /** Gone once compiled: `import type`, `export type … from`, or every named binding marked `type`. */
  typeOnly: boolean;
  line: number;
}

/** Every import of a module source: static, export-from, and dynamic `import('…')` with a literal. */
export function importsOf(source: string, fileName = 'module.ts'): Import[] {
  const sf = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: Import[] = [];
  const lineOf = (node: ts.Node) => sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const named = clause?.namedBindings;
      const allNamedTypes = clause !== undefined && clause.name === undefined && named !== undefined && ts.isNamedImports(named) && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly);
      found.push({ specifier: node.moduleSpecifier.text, typeOnly: clause !== undefined && (clause.isTypeOnly || allNamedTypes), line: lineOf(node) });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.exportClause;
      const allNamedTypes = clause !== undefined && ts.isNamedExports(clause) && clause.elements.length > 0 && clause.elements.every((e) => e.isTypeOnly);
      found.push({ specifier: node.moduleSpecifier.text, typeOnly: node.isTypeOnly || allNamedTypes, line: lineOf(node) });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const arg = node.arguments[0];
      if (arg && (ts.isStringLiteral(arg) || ts.isNoSubstitutionTemplateLiteral(arg))) found.push({ specifier: arg.text, typeOnly: false, line: lineOf(node) });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      // `typeof import('./x.js')` in a type position
      found.push({ specifier: node.argument.literal.text, typeOnly: true, line: lineOf(node) });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

/** A relative specifier resolved against the importing file, as a path inside the slice; undefined when it leaves the slice or is a package. */
export function resolveInSlice(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const joined = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  if (joined.startsWith('../') || joined === '..') return undefined;
  return joined.replace(/\.js$/, '.ts');
}

export interface Problem {
  file: string;
  message: string;
}

/** What breaks the rules among `sources` (path inside the slice -> source text). */
export function checkLayers(sources: ReadonlyMap<string, string>): Problem[] {
  const problems: Problem[] = [];
  const runtime = new Map<string, string[]>();
  for (const [file, source] of sources) {
    const from = layerOf(file);
    if (from === undefined) {
      problems.push({ file, message: `${file} is in no layer: put it in ingest/, store/, read/ or live/, or name it a shared or top module in test/log-layers.test.ts` });
      continue;
    }
    const edges: string[] = [];
    for (const imp of importsOf(source, file)) {
      const target = resolveInSlice(file, imp.specifier);
      if (target === undefined) continue;
      const to = layerOf(target);
      if (to !== undefined && !MAY_IMPORT[from].includes(to)) {
        problems.push({ file, message: `${file}:${imp.line} (${from}) imports ${imp.specifier} (${to}${imp.typeOnly ? ', type only' : ''}): ${from === 'shared' ? 'a shared module imports no layer' : `${from} may import only ${MAY_IMPORT[from].join(', ')}`}` });
      }
      if (!imp.typeOnly && sources.has(target)) edges.push(target);
    }
    runtime.set(file, edges);
  }
  for (const cycle of cyclesOf(runtime)) problems.push({ file: cycle[0]!, message: `runtime import cycle: ${cycle.join(' -> ')}` });
  return problems;
}

/** Each circle of a graph found by depth-first search, as the path from its first file back to it. */
export function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (node: string): void => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      const s = state.get(next);
      if (s === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (s === undefined) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of [...graph.keys()].sort()) if (!state.has(node)) visit(node);
  return cycles;
}

function sliceSources(): Map<string, string> {
  const sources = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ts')) sources.set(path.relative(SLICE, p).split(path.sep).join('/'), readFileSync(p, 'utf8'));
    }
  };
  walk(SLICE);
  return sources;
}

describe('the checker', () => {
  it('reads every form of import, type-only or not', () => {
    const source = [
      "import type { A } from './a.js';",
      "import { type B, type C } from './b.js';",
      "import {",
      "  d,",
      "  type E,",
      "} from './d.js';",
      "import * as f from './f.js';",
      "import './side-effect.js';",
      "export { g } from './g.js';",
      "export type { H } from './h.js';",
      "export * from './star.js';",
      "// import { x } from './in-a-comment.js';",
      "const s = \"import { y } from './in-a-string.js'\";",
      "export async function later() { return import('./lazy.js'); }",
      "export type Mod = typeof import('./typed.js');",
    ].join('\n');
    expect(importsOf(source).map((i) => `${i.specifier}${i.typeOnly ? ' (type)' : ''}`)).toEqual([
      './a.js (type)',
      './b.js (type)',
      './d.js',
      './f.js',
      './side-effect.js',
      './g.js',
      './h.js (type)',
      './star.js',
      './lazy.js',
      './typed.js (type)',
    ]);
  });

  it('passes a legal graph', () => {
    const legal = new Map([
      ['service.ts', "import { ingest } from './ingest/ingest.js';\nimport { search } from './read/search.js';"],
      ['ingest/ingest.ts', "import { write } from '../store/index.js';\nimport { fold } from '../query/text.js';\nimport { AppError } from '../../errors.js';"],
      ['read/search.ts', "import type { LogStore } from '../store/index.js';\nimport { matchAll } from '../filter.js';"],
      ['live/tail.ts', "import { nextTurn } from '../turns.js';"],
      ['store/index.ts', "import { a } from './sql.js';\nimport type { B } from './writer.js';"],
      ['store/sql.ts', ''],
      // type-only imports may go round within a layer
      ['store/writer.ts', "import type { C } from './index.js';"],
      ['filter.ts', "import { parse } from './query/index.js';"],
      ['query/index.ts', "import { levelName } from '../levels.js';"],
      ['turns.ts', ''],
      ['levels.ts', "import { fold } from './query/text.js';"],
      ['query/text.ts', ''],
    ]);
    expect(checkLayers(legal)).toEqual([]);
  });

  it('reports a wrong-way import, type-only or not, naming the file and the import', () => {
    const wrong = new Map([
      ['store/blocks/store.ts', "import {\n  batchBytes,\n} from '../../ingest/ingest-queue.js';"],
      ['ingest/ingest-queue.ts', ''],
      ['live/commits.ts', "import type { Committed } from '../ingest/ingest-queue.js';"],
      ['read/search.ts', "const tail = await import('../live/tail.js');"],
      ['live/tail.ts', ''],
      ['levels.ts', "import type { LogStore } from './store/index.js';"],
      ['store/index.ts', ''],
      ['helpers.ts', ''],
    ]);
    expect(checkLayers(wrong).map((p) => p.message)).toEqual([
      'store/blocks/store.ts:1 (store) imports ../../ingest/ingest-queue.js (ingest): store may import only store, shared',
      'live/commits.ts:1 (live) imports ../ingest/ingest-queue.js (ingest, type only): live may import only live, store, shared',
      'read/search.ts:1 (read) imports ../live/tail.js (live): read may import only read, store, shared',
      'levels.ts:1 (shared) imports ./store/index.js (store, type only): a shared module imports no layer',
      'helpers.ts is in no layer: put it in ingest/, store/, read/ or live/, or name it a shared or top module in test/log-layers.test.ts',
    ]);
  });

  it('reports a runtime cycle with its path, and not one made of type-only imports', () => {
    const cycle = new Map([
      ['store/sql.ts', "import { sqliteSql } from './sqlite-sql.js';"],
      ['store/sqlite-sql.ts', "import { likePattern } from './postgres-sql.js';"],
      ['store/postgres-sql.ts', "import { x } from './sql.js';"],
      ['store/a.ts', "import type { B } from './b.js';"],
      ['store/b.ts', "import type { A } from './a.js';"],
    ]);
    expect(checkLayers(cycle).map((p) => p.message)).toEqual(['runtime import cycle: store/postgres-sql.ts -> store/sql.ts -> store/sqlite-sql.ts -> store/postgres-sql.ts']);
  });
});

describe('src/features/logs', () => {
  const sources = sliceSources();

  it('is read whole (the check is not vacuous)', () => {
    for (const file of ['service.ts', 'ingest/ingest-queue.ts', 'store/index.ts', 'read/search.ts', 'live/tail.ts', 'query/index.ts']) expect(sources.has(file), file).toBe(true);
    const imports = [...sources.values()].reduce((n, s) => n + importsOf(s).length, 0);
    expect(imports).toBeGreaterThan(100);
  });

  it('imports one way, with no runtime cycle', () => {
    expect(checkLayers(sources).map((p) => p.message)).toEqual([]);
  });
});
