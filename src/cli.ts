#!/usr/bin/env node
import { Command } from 'commander';
import { ConfigError, loadConfig } from './config.js';
import { openDatabase } from './db/connect.js';
import { migrateToLatest } from './db/migrate.js';
import { normaliseEmail } from './features/accounts/email-address.js';
import { setPlanByEmail } from './features/accounts/repository.js';
import { isPlanName, PLAN_NAMES } from './features/plans/plans.js';
import { serve } from './main.js';
import { VERSION } from './app.js';

const program = new Command()
  .name('loglane')
  .description('Loglane: a self-hostable log collection service.\nSettings come from environment variables; see the README for the full list.')
  .version(VERSION)
  .showHelpAfterError();

program
  .command('serve')
  .description('start the HTTP server (what `npm start` runs); applies migrations first')
  .action(async () => {
    await serve();
  });

program
  .command('migrate')
  .description('apply pending database migrations and exit')
  .action(async () => {
    const config = loadConfig();
    const database = openDatabase(config);
    try {
      const { applied } = await migrateToLatest(database.db);
      console.log(applied.length ? `Applied ${applied.length} migration(s) to ${database.description}: ${applied.join(', ')}` : `${database.description} is up to date.`);
    } finally {
      await database.close();
    }
  });

const users = program.command('users').description('manage user accounts');
users
  .command('set-plan')
  .description(`change a user's plan (${PLAN_NAMES.join(', ')}); takes effect on their next request`)
  .argument('<email>', 'the account email')
  .argument('<plan>', `one of ${PLAN_NAMES.join(', ')}`)
  .action(async (email: string, plan: string) => {
    const planName = plan.toLowerCase();
    if (!isPlanName(planName)) {
      console.error(`Unknown plan "${plan}". Plans: ${PLAN_NAMES.join(', ')}.`);
      process.exitCode = 2;
      return;
    }
    const config = loadConfig();
    const database = openDatabase(config);
    try {
      await migrateToLatest(database.db);
      const found = await setPlanByEmail(database.db, normaliseEmail(email), planName, Date.now());
      if (!found) {
        console.error(`No user with email ${normaliseEmail(email)}.`);
        process.exitCode = 1;
        return;
      }
      console.log(`${normaliseEmail(email)} is now on the ${planName} plan.`);
    } finally {
      await database.close();
    }
  });

program
  .command('openapi')
  .description('print the OpenAPI document of this version of the API (JSON)')
  .action(async () => {
    const { openApiDocument } = await import('./openapi.js');
    process.stdout.write(`${JSON.stringify(await openApiDocument(), null, 2)}\n`);
  });

/** A query given both as the argument and as --query: both must hold. */
function joinQueries(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined || a.trim() === '') return b;
  if (b === undefined || b.trim() === '') return a;
  return `(${a}) (${b})`;
}

const withFilters = (c: Command) =>
  c
    .option('-l, --level <levels>', 'one level or a comma list (trace, debug, info, warn, error, fatal)')
    .option('-s, --source <source>', 'only logs from this source')
    .option('-q, --query <query>', 'a search query, e.g. \'@res.statusCode:>=500 -@req.url:"/healthz"\' (see docs/search.md)')
    .option('-c, --contains <text>', 'messages containing this text (case-insensitive)')
    .option('-p, --pattern <re2>', 'messages matching this RE2 regular expression')
    .option('--json', 'one JSON log per line instead of coloured text')
    .option('--server <url>', 'the server signed in to (default: the one from `loglane login`)');

program
  .command('login')
  .description('sign in to a Loglane server and keep the tokens for the other commands')
  .option('--server <url>', 'the server', process.env.LOGLANE_SERVER ?? 'http://localhost:8080')
  .option('--email <email>', 'your account email (asked for when omitted)')
  .option('--password-stdin', 'read the password from standard input (for scripts)')
  .action(async (o: { server?: string; email?: string; passwordStdin?: boolean }) => (await import('./remote.js')).login(o));

program
  .command('logout')
  .description('sign out and forget the stored tokens')
  .action(async () => (await import('./remote.js')).logout());

program
  .command('projects')
  .description('list your projects: their logs and what they take on disk')
  .option('--json', 'one JSON object per project and line')
  .option('--server <url>', 'the server signed in to (default: the one from `loglane login`)')
  .action(async (o: { server?: string; json?: boolean }) => (await import('./remote.js')).projects(o));

withFilters(program.command('search').description('search a project\'s logs, newest first').argument('<project>', 'project id or name').argument('[query]', 'a search query (the same as --query), e.g. \'level:error req-1007\''))
  .option('--since <duration>', 'only logs from this long ago, e.g. 15m, 6h, 7d')
  .option('--from <time>', 'ISO 8601 start')
  .option('--to <time>', 'ISO 8601 end')
  .option('-n, --limit <n>', 'how many logs at most', '100')
  .action(async (project: string, query: string | undefined, o) => (await import('./remote.js')).search(project, { ...o, query: joinQueries(query, o.query) }));

withFilters(program.command('tail').description('follow a project\'s logs live, coloured by level (Ctrl-C stops)').argument('<project>', 'project id or name'))
  .action(async (project: string, o) => (await import('./remote.js')).tail(project, o));

program
  .command('send')
  .description('ship a file (or standard input) line by line: JSON lines as logs, other lines as messages')
  .argument('[file]', 'the file; - or nothing for standard input')
  .option('-k, --api-key <key>', 'the project API key (or LOGLANE_API_KEY)')
  .option('--project <project>', 'instead of a key: a project id or name of the signed-in account')
  .option('--server <url>', 'the server (default: the one from `loglane login`, else http://localhost:8080)')
  .option('-b, --batch <n>', 'logs per request (up to 10000)', '1000')
  .option('-l, --level <level>', 'level for lines that do not say')
  .option('-s, --source <source>', 'source for lines that do not say')
  .option('--progress', 'show the progress bar even when standard error is not a terminal')
  .option('--no-progress', 'never show the progress bar')
  .action(async (file: string | undefined, o) => (await import('./remote.js')).send(file, o));

program.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof ConfigError) console.error(err.message);
  else console.error(`loglane: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
