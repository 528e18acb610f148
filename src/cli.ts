#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { ConfigError, loadConfig } from './config.js';
import { isPlanName, PLAN_NAMES } from './features/plans/plans.js';

// The server's modules are loaded by the commands that use them: a command that talks to a
// server over its API starts in a tenth of the time without them.
/** The package's version (the server's VERSION is the same; a test holds them together). */
const VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

const program = new Command()
  .name('loglane')
  .description('Loglane: a self-hostable log collection service.\nSettings come from environment variables; see the README for the full list.')
  .version(VERSION)
  .showHelpAfterError();

program
  .command('serve')
  .description('start the HTTP server (what `npm start` runs); applies migrations first')
  .action(async () => {
    await (await import('./main.js')).serve();
  });

program
  .command('migrate')
  .description('apply pending database migrations and exit')
  .action(async () => {
    const config = loadConfig();
    const { openDatabase } = await import('./db/connect.js');
    const { migrateToLatest } = await import('./db/migrate.js');
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
    const { openDatabase } = await import('./db/connect.js');
    const { migrateToLatest } = await import('./db/migrate.js');
    const { normaliseEmail } = await import('./features/accounts/email-address.js');
    const { setPlanByEmail } = await import('./features/accounts/repository.js');
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
    .option('--server <url>', 'the server signed in to (default: the one from `loglane login`)');

const withRange = (c: Command, start = 'ISO 8601 start (or epoch ms)') =>
  c
    .option('--since <duration>', 'only logs from this long ago until now, e.g. 15m, 6h, 7d')
    .option('--from <time>', start)
    .option('--to <time>', 'ISO 8601 end (or epoch ms); default now');

const withLogOutput = (c: Command) =>
  c
    .option('-o, --output <format>', 'table (aligned columns) or json (one JSON object per line)', undefined)
    .option('--fields <list>', 'the columns, a comma list of timestamp, level, source, message, id, receivedAt, metadata and @metadata.paths (default timestamp,level,source,message); with -o json, each line holds just these')
    .option('--no-header', 'no header row in the table')
    .option('--json', 'the same as -o json');

const examples = (lines: string[]) => `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;

program
  .command('login')
  .description('sign in to a Loglane server and keep the tokens for the other commands')
  .option('--server <url>', 'the server', process.env.LOGLANE_SERVER ?? 'http://localhost:8080')
  .option('--email <email>', 'your account email (asked for when omitted)')
  .option('--password-stdin', 'read the password from standard input (for scripts)')
  .addHelpText('after', examples(['loglane login --server https://logs.example.com', 'echo "$PASSWORD" | loglane login --server https://logs.example.com --email me@example.com --password-stdin']))
  .action(async (o: { server?: string; email?: string; passwordStdin?: boolean }) => (await import('./remote.js')).login(o));

program
  .command('logout')
  .description('sign out and forget the stored tokens')
  .action(async () => (await import('./remote.js')).logout());

program
  .command('projects')
  .description('list your projects: id, name, your role, their logs and what they take on disk')
  .option('-o, --output <format>', 'table, or json (one JSON object per project and line)')
  .option('--json', 'the same as -o json')
  .option('--server <url>', 'the server signed in to (default: the one from `loglane login`)')
  .addHelpText('after', examples(['loglane projects', "loglane projects -o json | jq -r 'select(.role == \"owner\") | .id'"]))
  .action(async (o: { server?: string; json?: boolean; output?: string }) => (await import('./remote.js')).projects(o));

withLogOutput(
  withRange(
    withFilters(
      program
        .command('search')
        .description("search a project's logs, newest first")
        .argument('<project>', 'project id or name')
        .argument('[query]', "a search query (the same as --query), e.g. 'level:error req-1007'"),
    ),
  ),
)
  .option('-n, --limit <n>', 'how many logs at most', '100')
  .addHelpText(
    'after',
    examples([
      "loglane search checkout-api 'level:error' --since 1h",
      "loglane search checkout-api '@res.statusCode:>=500' --fields timestamp,@req.method,@req.url,@res.statusCode,message",
      'loglane search checkout-api req-1007 -o json | jq .metadata',
      'loglane search checkout-api --from 2026-11-24T09:00:00Z --to 2026-11-24T10:00:00Z -n 5000 > morning.txt',
    ]),
  )
  .action(async (project: string, query: string | undefined, o) => (await import('./remote.js')).search(project, { ...o, query: joinQueries(query, o.query) }));

withLogOutput(withFilters(program.command('tail').description("follow a project's logs live, coloured by level (Ctrl-C stops)").argument('<project>', 'project id or name')))
  .addHelpText('after', examples(["loglane tail checkout-api --level warn,error", "loglane tail checkout-api -q '@res.statusCode:>=500' --fields timestamp,@req.url,@res.statusCode,@responseTime", 'loglane tail checkout-api -o json | jq -c .metadata']))
  .action(async (project: string, o) => (await import('./remote.js')).tail(project, o));

withRange(
  withFilters(
    program
      .command('stats')
      .description('count a project\'s logs over a time range, split by a field (or by level): the totals of the range, then per time bucket')
      .argument('<project>', 'project id or name')
      .argument('[query]', 'a search query (the same as --query)'),
  ),
  'ISO 8601 start (or epoch ms); default 24 hours before --to',
)
  .option('-g, --group-by <field>', 'level, source or a metadata path such as @res.statusCode: its 10 most frequent values, the rest as (other), logs without it as (none)')
  .option('-i, --interval <duration>', 'bucket size, e.g. 1m, 5m, 1h, 1d (default: chosen from the range)')
  .option('--no-buckets', 'only the totals of the range, not the table per bucket')
  .option('-o, --output <format>', 'table, or json (the API\'s answer as it is)')
  .option('--json', 'the same as -o json')
  .addHelpText(
    'after',
    examples([
      'loglane stats checkout-api --since 1h',
      'loglane stats checkout-api --group-by @res.statusCode --since 6h --interval 15m',
      "loglane stats checkout-api 'level:>=warn' --group-by source --since 1d --no-buckets",
      'loglane stats checkout-api --group-by @req.url --from 2026-11-24T00:00:00Z --to 2026-11-25T00:00:00Z -o json',
    ]),
  )
  .action(async (project: string, query: string | undefined, o) => (await import('./cli-stats.js')).stats(project, { ...o, query: joinQueries(query, o.query) }));

withRange(
  withFilters(
    program
      .command('export')
      .description('download every log a search matches (newest first, no cap) as NDJSON or CSV, streamed to standard output or a file')
      .argument('<project>', 'project id or name')
      .argument('[query]', 'a search query (the same as --query)'),
  ),
)
  .option('-f, --format <format>', 'ndjson (one log per line, as the API gives it) or csv', 'ndjson')
  .option('--columns <list>', 'CSV columns: a comma list of timestamp, level, source, message and @metadata.paths (default timestamp,level,source,message)')
  .option('--raw', "CSV: write cells as they are (by default a cell beginning with =, +, -, @, a tab or a carriage return gets a leading ' so a spreadsheet does not run it)")
  .option('-O, --output-file [file]', 'write to this file instead of standard output (without a name: the name the server suggests)')
  .option('--progress', 'show progress (logs, bytes, rate) even when standard error is not a terminal')
  .option('--no-progress', 'never show progress')
  .addHelpText(
    'after',
    examples([
      "loglane export checkout-api 'level:error' --since 24h -O errors.ndjson",
      "loglane export checkout-api '@res.statusCode:>=500' --since 7d --format csv --columns timestamp,@req.method,@req.url,@res.statusCode,message -O",
      "loglane export checkout-api --from 2026-11-24T00:00:00Z --to 2026-11-25T00:00:00Z | gzip > day.ndjson.gz",
    ]),
  )
  .action(async (project: string, query: string | undefined, o) => (await import('./cli-export.js')).exportLogs(project, { ...o, query: joinQueries(query, o.query) }));

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

// `loglane search … | head`: when the reader goes away, stop quietly.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

program.parseAsync(process.argv).catch(async (err: unknown) => {
  if (err instanceof ConfigError) console.error(err.message);
  else console.error(`loglane: ${(await import('./remote.js')).describeError(err)}`);
  process.exit(1);
});
