#!/usr/bin/env node
import { Command } from 'commander';
import { ConfigError, loadConfig } from './config.js';
import { openDatabase } from './db/connect.js';
import { migrateToLatest } from './db/migrate.js';
import { normaliseEmail } from './features/accounts/service.js';
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

program.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof ConfigError) console.error(err.message);
  else console.error(`loglane: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
